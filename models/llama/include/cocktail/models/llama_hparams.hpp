#pragma once

#include <cstdint>
#include <string>

#include "cocktail/compute.hpp"
#include "cocktail/kv_shape.hpp"
#include "cocktail/models/gguf_file.hpp"

namespace cocktail::models {

// The shape of a Llama-family decoder, read from a GGUF file's `<architecture>.*` metadata.
// The architectures differ only in data: Qwen2 ("qwen2") is Llama ("llama") with biases on the
// q, k and v projections and NeoX-style RoPE.
struct LlamaHyperparameters {
  std::string architecture;  // general.architecture
  int n_layers = 0;
  int n_embd = 0;      // hidden size
  int n_ff = 0;        // feed-forward (SwiGLU) size
  int n_heads = 0;     // query heads
  int n_kv_heads = 0;  // key/value heads (GQA: n_heads is a multiple)
  int head_dim = 0;
  int n_vocab = 0;
  std::int64_t context_length = 0;  // positions the model was trained for
  float rope_base = 10000.0f;
  float rms_eps = 1e-5f;
  RopeStyle rope_style = RopeStyle::adjacent_pairs;
  bool qkv_bias = false;  // the q, k and v projections add a bias

  // Throws Error naming the key or the inconsistency (an unsupported architecture, a head
  // count that does not divide the hidden size, partial rotary embeddings, RoPE scaling, ...).
  static LlamaHyperparameters from_gguf(const GgufFile& file);

  KvShape kv_shape() const { return {n_layers, n_kv_heads, head_dim}; }
};

}  // namespace cocktail::models
