#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cocktail/compute.hpp"
#include "cocktail/models/bert_model.hpp"

namespace cocktail::models {

// Runs a BertModel as a sentence encoder on a backend's Compute: token sequences in, one
// embedding per sequence out, the mean of its tokens' last hidden states (attention mask all
// ones: sequences are not padded), L2-normalised — sentence-transformers' Transformer, Pooling
// (mean) and Normalize modules. Sequences are packed end to end into batches of up to
// `batch_tokens` tokens, one forward each: the matmuls see every token of the batch as rows,
// attention stays inside each sequence.
class BertEncoder {
 public:
  BertEncoder(const BertModel& model, Compute& compute, std::int64_t batch_tokens);

  // [sequences][hidden_size]. Every sequence holds 1 to max_seq_length ids of the vocabulary
  // (WordPieceTokenizer::encode gives such); throws cocktail::Error otherwise (an id outside
  // the vocabulary from Compute::embedding).
  std::vector<float> embed(std::span<const std::vector<std::int32_t>> sequences);

 private:
  // The last hidden states of the batch's tokens into x_.
  void forward(std::span<const std::vector<std::int32_t>> batch);
  void embeddings(std::span<const std::vector<std::int32_t>> batch);
  void attention(const BertLayer& layer);
  void feed_forward(const BertLayer& layer);
  // out = in · weightᵀ + bias, for the batch's tokens.
  void linear(const Linear& layer, std::span<const float> in, std::span<float> out);
  // Rows of `buffer` for the batch's tokens, `width` floats each.
  std::span<float> rows(std::vector<float>& buffer, std::int64_t width) const;

  const BertModel& model_;
  Compute& compute_;
  std::int64_t batch_tokens_;
  std::int64_t n_ = 0;  // tokens in the batch
  std::vector<std::int64_t> lengths_;
  std::vector<std::int32_t> ids_, positions_, types_;
  std::vector<float> x_, q_, k_, v_, context_, projected_, hidden_;
};

}  // namespace cocktail::models
