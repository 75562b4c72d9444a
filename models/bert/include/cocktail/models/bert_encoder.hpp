#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cocktail/backend.hpp"
#include "cocktail/compute.hpp"
#include "cocktail/models/bert_model.hpp"

namespace cocktail::models {

// Runs a BertModel as a sentence encoder on a backend: token sequences in, one embedding per
// sequence out, the mean of its tokens' last hidden states (attention mask all ones: sequences
// are not padded), L2-normalised — sentence-transformers' Transformer, Pooling (mean) and
// Normalize modules. Sequences are packed end to end into batches of up to `batch_tokens`
// tokens, one forward each: the matmuls see every token of the batch as rows, attention stays
// inside each sequence. The model is uploaded once, at construction; the batch's activations
// stay on the device, and only the last hidden states come back for pooling.
class BertEncoder {
 public:
  BertEncoder(const BertModel& model, std::shared_ptr<Backend> backend, std::int64_t batch_tokens);

  // [sequences][hidden_size]. Every sequence holds 1 to max_seq_length ids of the vocabulary
  // (WordPieceTokenizer::encode gives such); throws cocktail::Error otherwise (an id outside
  // the vocabulary from Compute::embedding).
  std::vector<float> embed(std::span<const std::vector<std::int32_t>> sequences);

 private:
  struct DeviceLinear {
    std::unique_ptr<Weights> weight;
    Tensor bias;  // [1][out]
  };
  struct DeviceNorm {
    Tensor weight, bias;  // [1][hidden]
  };
  struct DeviceLayer {
    DeviceLinear query, key, value, attention_output;
    DeviceNorm attention_norm;
    DeviceLinear intermediate, output;
    DeviceNorm output_norm;
  };

  void upload_model();
  // The last hidden states of the batch's tokens into x_host_.
  void forward(std::span<const std::vector<std::int32_t>> batch);
  void embeddings(std::span<const std::vector<std::int32_t>> batch);
  void attention(const DeviceLayer& layer);
  void feed_forward(const DeviceLayer& layer);
  // out = in · weightᵀ + bias, for the batch's tokens.
  void linear(const DeviceLinear& layer, const Tensor& in, const Tensor& out);
  // The batch's rows of an activation.
  Tensor rows(const Tensor& activation) const { return activation.row_range(0, n_); }

  const BertModel& model_;
  std::shared_ptr<Backend> backend_;
  std::shared_ptr<Compute> compute_;  // declared before the uploads, so destroyed after them
  std::shared_ptr<Stream> stream_;
  std::int64_t batch_tokens_;
  std::shared_ptr<Buffer> vectors_;  // the biases and norm weights
  std::unique_ptr<Weights> word_embeddings_, position_embeddings_, token_type_embeddings_;
  DeviceNorm embedding_norm_;
  std::vector<DeviceLayer> layers_;
  std::shared_ptr<Buffer> activations_;
  Tensor ids_, positions_, types_;                       // i32 [rows][1]
  Tensor x_, q_, k_, v_, context_, projected_, hidden_;  // f32 [rows][width]
  std::int64_t n_ = 0;                                   // tokens in the batch
  std::vector<std::int64_t> lengths_;
  std::vector<std::int32_t> ids_host_, positions_host_, types_host_;
  std::vector<float> x_host_;
};

}  // namespace cocktail::models
