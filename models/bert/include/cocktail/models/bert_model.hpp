#pragma once

#include <filesystem>
#include <vector>

#include "cocktail/compute.hpp"
#include "cocktail/models/bert_config.hpp"
#include "cocktail/models/safetensors_file.hpp"
#include "cocktail/models/wordpiece_tokenizer.hpp"

namespace cocktail::models {

// A linear layer: weight [out][in] (a view into the model file) and its bias.
struct Linear {
  WeightView weight;
  std::vector<float> bias;
};

struct LayerNormWeights {
  std::vector<float> weight;
  std::vector<float> bias;
};

// One encoder block: self-attention, then the feed-forward network, each followed by a
// residual connection and a LayerNorm (post-norm).
struct BertLayer {
  Linear query, key, value, attention_output;
  LayerNormWeights attention_norm;
  Linear intermediate, output;
  LayerNormWeights output_norm;
};

// A BERT encoder as a sentence-transformers folder holds it: config.json,
// sentence_bert_config.json, vocab.txt and model.safetensors (Hugging Face BertModel tensor
// names, F32, F16 or BF16). Opening checks the hyper-parameters and every tensor's presence,
// dtype and shape, naming the first that is wrong; matrices stay in the file's mapping.
class BertModel {
 public:
  explicit BertModel(const std::filesystem::path& dir);

  const BertConfig& config() const { return config_; }
  const WordPieceTokenizer& tokenizer() const { return tokenizer_; }
  const WeightView& word_embeddings() const { return word_embeddings_; }
  const WeightView& position_embeddings() const { return position_embeddings_; }
  const WeightView& token_type_embeddings() const { return token_type_embeddings_; }
  const LayerNormWeights& embedding_norm() const { return embedding_norm_; }
  const std::vector<BertLayer>& layers() const { return layers_; }

 private:
  BertConfig config_;
  WordPieceTokenizer tokenizer_;
  SafetensorsFile file_;
  WeightView word_embeddings_, position_embeddings_, token_type_embeddings_;
  LayerNormWeights embedding_norm_;
  std::vector<BertLayer> layers_;
};

}  // namespace cocktail::models
