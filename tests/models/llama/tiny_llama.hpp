#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "models/gguf/gguf_writer.hpp"  // tests/models/gguf

namespace cocktail::testing {

// A tiny random Llama model written as a GGUF file, with its weights kept as the floats the
// file's blocks decode to, for a float64 reference forward.
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
    Matrix q, k, v, o, gate, up, down;
  };
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
