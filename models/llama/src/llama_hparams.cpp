#include "cocktail/models/llama_hparams.hpp"

#include <fmt/format.h>

#include "cocktail/error.hpp"

namespace cocktail::models {
namespace {

[[noreturn]] void reject(const GgufFile& file, const std::string& what) {
  throw Error(fmt::format("{}: {}", file.path().string(), what));
}

int positive(const GgufFile& file, const std::string& key, std::uint32_t value) {
  if (value == 0 || value > (1u << 20)) {
    reject(file, fmt::format("{} = {} is out of range (1 to {})", key, value, 1u << 20));
  }
  return int(value);
}

}  // namespace

LlamaHyperparameters LlamaHyperparameters::from_gguf(const GgufFile& file) {
  const std::string arch = file.get_string("general.architecture");
  if (arch != "llama") {
    reject(file,
           fmt::format("general.architecture = '{}' is not supported; supported: llama", arch));
  }
  LlamaHyperparameters h;
  h.n_layers = positive(file, "llama.block_count", file.get_u32("llama.block_count"));
  h.n_embd = positive(file, "llama.embedding_length", file.get_u32("llama.embedding_length"));
  h.n_ff = positive(file, "llama.feed_forward_length", file.get_u32("llama.feed_forward_length"));
  h.n_heads =
      positive(file, "llama.attention.head_count", file.get_u32("llama.attention.head_count"));
  h.n_kv_heads = positive(file, "llama.attention.head_count_kv",
                          file.find_u32("llama.attention.head_count_kv").value_or(h.n_heads));
  h.context_length = positive(file, "llama.context_length", file.get_u32("llama.context_length"));
  h.rope_base = file.find_f32("llama.rope.freq_base").value_or(h.rope_base);
  h.rms_eps = file.find_f32("llama.attention.layer_norm_rms_epsilon").value_or(h.rms_eps);
  if (h.n_embd % h.n_heads != 0) {
    reject(file, fmt::format("llama.embedding_length = {} is not a multiple of "
                             "llama.attention.head_count = {}",
                             h.n_embd, h.n_heads));
  }
  if (h.n_heads % h.n_kv_heads != 0) {
    reject(file, fmt::format("llama.attention.head_count = {} is not a multiple of "
                             "llama.attention.head_count_kv = {}",
                             h.n_heads, h.n_kv_heads));
  }
  h.head_dim = h.n_embd / h.n_heads;
  const auto rotary = file.find_u32("llama.rope.dimension_count");
  if (rotary && int(*rotary) != h.head_dim) {
    reject(file, fmt::format("llama.rope.dimension_count = {} differs from the head dimension "
                             "{}; partial rotary embeddings are not supported",
                             *rotary, h.head_dim));
  }
  if (!(h.rope_base > 0.0f) || !(h.rms_eps > 0.0f)) {
    reject(file, fmt::format("llama.rope.freq_base = {} and "
                             "llama.attention.layer_norm_rms_epsilon = {} must be positive",
                             h.rope_base, h.rms_eps));
  }
  h.n_vocab = int(file.tensor("token_embd.weight").rows());
  return h;
}

}  // namespace cocktail::models
