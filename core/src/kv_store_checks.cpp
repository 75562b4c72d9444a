#include "cocktail/kv_store_checks.hpp"

#include <string>

#include "cocktail/error.hpp"

namespace cocktail {

void check_kv_store_options(const KvStoreOptions& o) {
  const KvShape& s = o.shape;
  if (s.n_layers < 1 || s.n_kv_heads < 1 || s.head_dim < 1) {
    throw Error("KV store: layers, KV heads and head_dim must be positive (got " +
                std::to_string(s.n_layers) + ", " + std::to_string(s.n_kv_heads) + ", " +
                std::to_string(s.head_dim) + ")");
  }
  if (s.head_dim % 32 != 0) {
    throw Error("KV store: head_dim " + std::to_string(s.head_dim) +
                " is not a multiple of 32, which the kernels need");
  }
  if (o.layout.group_size < 32 || o.layout.group_size % 32 != 0) {
    throw Error("KV store: quant.group_size " + std::to_string(o.layout.group_size) +
                " must be a positive multiple of 32");
  }
}

void check_kv_layer(const KvShape& shape, int layer) {
  if (layer < 0 || layer >= shape.n_layers) {
    throw Error("KV store: layer " + std::to_string(layer) + " out of range [0, " +
                std::to_string(shape.n_layers) + ")");
  }
}

void check_kv_head(const KvShape& shape, int layer, int kv_head) {
  check_kv_layer(shape, layer);
  if (kv_head < 0 || kv_head >= shape.n_kv_heads) {
    throw Error("KV store: KV head " + std::to_string(kv_head) + " out of range [0, " +
                std::to_string(shape.n_kv_heads) + ")");
  }
}

void check_kv_append(const KvStoreOptions& options, std::span<const std::int64_t> layer_tokens,
                     int layer, std::int64_t n_tokens, std::size_t k_floats, std::size_t v_floats) {
  check_kv_layer(options.shape, layer);
  const std::int64_t held = layer_tokens[std::size_t(layer)];
  const std::size_t floats = std::size_t(n_tokens) * options.shape.token_floats();
  if (n_tokens < 0 || k_floats != floats || v_floats != floats) {
    throw Error("KV store: append of " + std::to_string(n_tokens) + " tokens to layer " +
                std::to_string(layer) + " needs " + std::to_string(floats) +
                " floats for K and V, got " + std::to_string(k_floats) + " and " +
                std::to_string(v_floats));
  }
  if (options.max_tokens > 0 && held + n_tokens > options.max_tokens) {
    throw Error("KV store: layer " + std::to_string(layer) + " would hold " +
                std::to_string(held + n_tokens) + " tokens, over the limit of " +
                std::to_string(options.max_tokens));
  }
}

bool can_requantize(Precision from, Precision to) {
  return from == to || (to > from && (from == Precision::fp16 || from == Precision::int8));
}

void check_commit(const Plan& plan, const Plan& committed,
                  std::span<const std::int64_t> layer_tokens) {
  plan.validate();
  const std::int64_t stored = layer_tokens.empty() ? 0 : layer_tokens[0];
  for (std::int64_t n : layer_tokens) {
    if (n != stored) {
      throw Error("KV store: commit while layers hold different token counts (" +
                  std::to_string(stored) + " and " + std::to_string(n) +
                  "); append every layer first");
    }
  }
  if (plan.n_tokens() > stored) {
    throw Error("KV store: plan covers " + std::to_string(plan.n_tokens()) +
                " tokens but the store holds " + std::to_string(stored));
  }
  if (plan.chunks.size() < committed.chunks.size()) {
    throw Error("KV store: a new plan has " + std::to_string(plan.chunks.size()) +
                " chunks, fewer than the " + std::to_string(committed.chunks.size()) +
                " already committed");
  }
  for (std::size_t i = 0; i < committed.chunks.size(); ++i) {
    const ChunkPlan& was = committed.chunks[i];
    const ChunkPlan& now = plan.chunks[i];
    if (was.first_token != now.first_token || was.n_tokens != now.n_tokens) {
      throw Error("KV store: chunk " + std::to_string(i) +
                  " changed its token span after it was committed");
    }
    if (!can_requantize(was.precision, now.precision)) {
      throw Error("KV store: chunk " + std::to_string(i) + " cannot go from " +
                  std::string(to_string(was.precision)) + " to " +
                  std::string(to_string(now.precision)) +
                  " (precision only goes down, and only from fp16 or int8)");
    }
  }
}

}  // namespace cocktail
