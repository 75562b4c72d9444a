#include "cocktail/models/llama_hparams.hpp"

#include <fmt/format.h>

#include <array>

#include "cocktail/error.hpp"

namespace cocktail::models {
namespace {

// What sets an architecture apart from Llama's decoder.
struct Architecture {
  std::string_view name;
  RopeStyle rope_style;
  bool qkv_bias;
};

constexpr std::array<Architecture, 2> kArchitectures{{
    {"llama", RopeStyle::adjacent_pairs, false},
    {"qwen2", RopeStyle::halves, true},
}};

[[noreturn]] void reject(const GgufFile& file, const std::string& what) {
  throw Error(fmt::format("{}: {}", file.path().string(), what));
}

const Architecture& architecture_of(const GgufFile& file) {
  const std::string name = file.get_string("general.architecture");
  for (const Architecture& a : kArchitectures)
    if (a.name == name) return a;
  reject(file, fmt::format("general.architecture = '{}' is not supported; supported: llama, qwen2",
                           name));
}

int positive(const GgufFile& file, const std::string& key, std::uint32_t value) {
  if (value == 0 || value > (1u << 20)) {
    reject(file, fmt::format("{} = {} is out of range (1 to {})", key, value, 1u << 20));
  }
  return int(value);
}

// The checks that need the whole shape; `p` is the keys' prefix ("qwen2.").
void check_consistent(const GgufFile& file, const std::string& p, const LlamaHyperparameters& h) {
  if (h.n_embd % h.n_heads != 0) {
    reject(file, fmt::format("{}embedding_length = {} is not a multiple of "
                             "{}attention.head_count = {}",
                             p, h.n_embd, p, h.n_heads));
  }
  if (h.n_heads % h.n_kv_heads != 0) {
    reject(file, fmt::format("{}attention.head_count = {} is not a multiple of "
                             "{}attention.head_count_kv = {}",
                             p, h.n_heads, p, h.n_kv_heads));
  }
  const int head_dim = h.n_embd / h.n_heads;
  const auto rotary = file.find_u32(p + "rope.dimension_count");
  if (rotary && int(*rotary) != head_dim) {
    reject(file, fmt::format("{}rope.dimension_count = {} differs from the head dimension "
                             "{}; partial rotary embeddings are not supported",
                             p, *rotary, head_dim));
  }
  // Scaled RoPE (YaRN, linear) turns positions by other angles: refuse it rather than differ.
  const auto scaling = file.find_string(p + "rope.scaling.type");
  if (scaling && *scaling != "none") {
    reject(file, fmt::format("{}rope.scaling.type = '{}' is not supported; supported: none", p,
                             *scaling));
  }
  if (!(h.rope_base > 0.0f) || !(h.rms_eps > 0.0f)) {
    reject(file, fmt::format("{}rope.freq_base = {} and "
                             "{}attention.layer_norm_rms_epsilon = {} must be positive",
                             p, h.rope_base, p, h.rms_eps));
  }
}

}  // namespace

LlamaHyperparameters LlamaHyperparameters::from_gguf(const GgufFile& file) {
  const Architecture& arch = architecture_of(file);
  const std::string p = std::string(arch.name) + ".";
  const auto size = [&](const std::string& key) {
    return positive(file, p + key, file.get_u32(p + key));
  };
  LlamaHyperparameters h;
  h.architecture = arch.name;
  h.rope_style = arch.rope_style;
  h.qkv_bias = arch.qkv_bias;
  h.n_layers = size("block_count");
  h.n_embd = size("embedding_length");
  h.n_ff = size("feed_forward_length");
  h.n_heads = size("attention.head_count");
  h.n_kv_heads = positive(file, p + "attention.head_count_kv",
                          file.find_u32(p + "attention.head_count_kv").value_or(h.n_heads));
  h.context_length = size("context_length");
  h.rope_base = file.find_f32(p + "rope.freq_base").value_or(h.rope_base);
  h.rms_eps = file.find_f32(p + "attention.layer_norm_rms_epsilon").value_or(h.rms_eps);
  check_consistent(file, p, h);
  h.head_dim = h.n_embd / h.n_heads;
  h.n_vocab = int(file.tensor("token_embd.weight").rows());
  return h;
}

}  // namespace cocktail::models
