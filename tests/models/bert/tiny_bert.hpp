#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "../gguf/gguf_writer.hpp"

namespace cocktail::testing {

// A tiny BERT sentence encoder with random weights, written as a sentence-transformers folder
// (config.json, sentence_bert_config.json, vocab.txt, model.safetensors), and a float64
// reference forward over the same weights. The FFN's input matrix is stored as F16 (its values
// rounded to half first, so the reference sees what the file holds); the rest as F32.
class TinyBert {
 public:
  static constexpr int kVocab = 24, kHidden = 8, kHeads = 2, kIntermediate = 16, kLayers = 2;
  static constexpr int kPositions = 16, kTypes = 2, kMaxSeq = 12;
  static constexpr double kEps = 1e-12;

  explicit TinyBert(unsigned seed);

  // Writes the folder; `config_edits` replace or add config.json fields (JSON text), and
  // `skip_tensor` leaves one tensor out, for the error tests.
  std::filesystem::path write(const TempDir& dir,
                              const std::map<std::string, std::string>& config_edits = {},
                              const std::string& skip_tensor = "") const;

  // The sentence embedding of `ids`: mean of the last hidden states, L2-normalised.
  std::vector<double> reference_embedding(const std::vector<std::int32_t>& ids) const;

 private:
  struct Tensor {
    std::vector<std::int64_t> shape;
    std::vector<double> values;
    bool half = false;
  };
  const Tensor& at(const std::string& name) const { return tensors_.at(name); }
  void add(const std::string& name, std::vector<std::int64_t> shape, double scale, double offset,
           bool half = false);

  std::map<std::string, Tensor> tensors_;
  unsigned seed_;
};

}  // namespace cocktail::testing
