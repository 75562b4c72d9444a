#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "models/gguf/gguf_writer.hpp"  // tests/models/gguf

namespace cocktail::testing {

// A tiny random Llama model written as a GGUF file, with its weights kept as the floats the
// file's blocks decode to, for a float64 reference forward. As a "qwen2" model it has biases on
// q, k and v, and rotates the halves of each head (NeoX RoPE).
struct TinyLlama {
  static constexpr int kLayers = 2, kEmbd = 64, kHeads = 2, kKvHeads = 1, kHeadDim = 32;
  static constexpr int kFf = 96, kVocab = 40, kContext = 256;
  static constexpr float kRopeBase = 10000.0f, kEps = 1e-5f;

  struct Matrix {
    int rows = 0, cols = 0;
    std::vector<double> w;  // [rows][cols], as decoded from the file
  };
  struct Layer {
    std::vector<double> attn_norm, ffn_norm;
    std::vector<double> q_bias, k_bias, v_bias;  // qwen2 only
    Matrix q, k, v, o, gate, up, down;
  };
  std::string architecture = "llama";  // or "qwen2", before write()
  // More metadata write() adds, as a file may carry it.
  std::vector<std::pair<std::string, models::GgufWriterValue>> extra_metadata;
  std::vector<Layer> layers;
  Matrix embd;  // tied output
  std::vector<double> out_norm;

  // Writes the file into `dir`; the weights above are filled as a side effect.
  std::filesystem::path write(const TempDir& dir, unsigned seed);

  // Float64 forward over `tokens` from position 0: the logits of the last token. K and V are
  // rounded to FP16 as the cache stores them.
  std::vector<double> reference_logits(const std::vector<std::int32_t>& tokens) const;
};

}  // namespace cocktail::testing
