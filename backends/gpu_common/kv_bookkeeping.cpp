#include "gpu_common/kv_bookkeeping.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "cocktail/error.hpp"
#include "cocktail/kv_store_checks.hpp"

namespace cocktail::gpu {

namespace {

// Without a max_tokens the tail starts with room for this many rows, and doubles.
constexpr std::int64_t kMinTailRows = 256;

}  // namespace

KvBookkeeping::KvBookkeeping(const KvStoreOptions& options) : options_(options) {
  check_kv_store_options(options_);
  for (Precision p : kAllPrecisions) {
    formats_[std::size_t(p)] = tile_format(p, options_.layout, options_.shape.head_dim);
  }
  layer_tokens_.assign(std::size_t(options_.shape.n_layers), 0);
}

TileBytes KvBookkeeping::tile_bytes() const {
  TileBytes bytes{};
  for (Precision p : kAllPrecisions) bytes[std::size_t(p)] = format(p).bytes();
  return bytes;
}

std::int64_t KvBookkeeping::layer_tokens(int layer) const {
  check_kv_layer(options_.shape, layer);
  return layer_tokens_[std::size_t(layer)];
}

std::int64_t KvBookkeeping::most_layer_tokens() const {
  return *std::max_element(layer_tokens_.begin(), layer_tokens_.end());
}

std::int64_t KvBookkeeping::tail_capacity(std::int64_t committed, std::int64_t rows) const {
  if (options_.max_tokens > 0) return options_.max_tokens - committed;
  return std::max(kMinTailRows, 2 * rows);
}

std::size_t KvBookkeeping::bytes() const {
  return stored_bytes(tiles_, tile_bytes(), options_.shape, layer_tokens_, n_committed_);
}

std::vector<SegmentInfo> KvBookkeeping::segments() const {
  return segment_infos(tiles_, tile_bytes(), options_.shape, n_tokens() - n_committed_);
}

std::vector<std::int64_t> KvBookkeeping::positions(int layer) const {
  return storage_positions(tiles_, n_committed_, layer_tokens(layer));
}

void KvBookkeeping::check_append(int layer, const Tensor& k, const Tensor& v) const {
  const auto width = std::int64_t(options_.shape.token_floats());
  expect_tensor("KV store: append", "k", k, ElementType::f32, k.rows, width);
  expect_tensor("KV store: append", "v", v, ElementType::f32, k.rows, width);
  check_kv_append(options_, layer_tokens_, layer, k.rows, std::size_t(k.elements()),
                  std::size_t(v.elements()));
}

void KvBookkeeping::appended(int layer, std::int64_t rows) {
  layer_tokens_[std::size_t(layer)] += rows;
  if (layer == 0) ++version_;
}

void KvBookkeeping::check_commit(const Plan& plan) const {
  cocktail::check_commit(plan, plan_, layer_tokens_);
}

void KvBookkeeping::committed(const Plan& plan, std::int64_t n_committed, TileLists tiles) {
  plan_ = plan;
  tiles_ = std::move(tiles);
  n_committed_ = n_committed;
  ++version_;
}

void KvBookkeeping::throw_commit_fault(bool non_finite, std::int64_t head, std::int64_t position,
                                       int part, std::int64_t channel) const {
  const int kv_heads = options_.shape.n_kv_heads;
  throw Error(std::string("KV store: commit: ") + (part == 0 ? "a key" : "a value") +
              (non_finite ? "" : ", or its quantization group,") + " of layer " +
              std::to_string(head / kv_heads) + ", KV head " + std::to_string(head % kv_heads) +
              " at position " + std::to_string(position) + ", channel " + std::to_string(channel) +
              (non_finite ? " is not finite" : " is beyond the FP16 range") +
              "; nothing was committed");
}

KvBookkeeping KvBookkeeping::copy_with(const KvQuantLayout& layout) const {
  if (n_committed_ > 0 && !(layout == options_.layout)) {
    throw Error("KV store: a copy of a committed store must keep its quantization layout");
  }
  KvStoreOptions options = options_;
  options.layout = layout;
  KvBookkeeping copy(options);
  copy.tiles_ = tiles_;
  copy.layer_tokens_ = layer_tokens_;
  copy.n_committed_ = n_committed_;
  copy.version_ = version_;
  copy.plan_ = plan_;
  return copy;
}

}  // namespace cocktail::gpu
