#include "cocktail/models/bert_encoder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cocktail/error.hpp"
#include "cocktail/tensor_allocation.hpp"

namespace cocktail::models {
namespace {

// sentence-transformers' Normalize: x / max(|x|, eps).
constexpr double kNormEps = 1e-12;

}  // namespace

BertEncoder::BertEncoder(const BertModel& model, std::shared_ptr<Backend> backend,
                         std::int64_t batch_tokens)
    : model_(model), backend_(std::move(backend)), batch_tokens_(batch_tokens) {
  if (batch_tokens < 1) throw Error(fmt::format("batch of {} tokens; at least 1", batch_tokens));
  if (!backend_) throw Error("BertEncoder: no backend");
  compute_ = backend_->make_compute();
  stream_ = backend_->make_stream();
  upload_model();
  // A batch holds up to batch_tokens tokens, or one sequence longer than that.
  const BertConfig& c = model_.config();
  const std::int64_t rows = std::max<std::int64_t>(batch_tokens, c.max_seq_length);
  const TensorRequest tensors[] = {{&ids_, ElementType::i32, rows, 1},
                                   {&positions_, ElementType::i32, rows, 1},
                                   {&types_, ElementType::i32, rows, 1},
                                   {&x_, ElementType::f32, rows, c.hidden_size},
                                   {&q_, ElementType::f32, rows, c.hidden_size},
                                   {&k_, ElementType::f32, rows, c.hidden_size},
                                   {&v_, ElementType::f32, rows, c.hidden_size},
                                   {&context_, ElementType::f32, rows, c.hidden_size},
                                   {&projected_, ElementType::f32, rows, c.hidden_size},
                                   {&hidden_, ElementType::f32, rows, c.intermediate_size}};
  activations_ = allocate_tensors(*backend_, tensors);
}

void BertEncoder::upload_model() {
  // Every bias and norm weight, with the view its device copy goes to.
  std::vector<std::pair<Tensor*, const std::vector<float>*>> vectors;
  const auto add_norm = [&](DeviceNorm& out, const LayerNormWeights& norm) {
    vectors.emplace_back(&out.weight, &norm.weight);
    vectors.emplace_back(&out.bias, &norm.bias);
  };
  add_norm(embedding_norm_, model_.embedding_norm());
  const std::vector<BertLayer>& in = model_.layers();
  layers_.resize(in.size());
  for (std::size_t l = 0; l < in.size(); ++l) {
    DeviceLayer& out = layers_[l];
    for (auto [device, host] : {std::pair{&out.query, &in[l].query},
                                {&out.key, &in[l].key},
                                {&out.value, &in[l].value},
                                {&out.attention_output, &in[l].attention_output},
                                {&out.intermediate, &in[l].intermediate},
                                {&out.output, &in[l].output}}) {
      device->weight = compute_->upload(host->weight);
      vectors.emplace_back(&device->bias, &host->bias);
    }
    add_norm(out.attention_norm, in[l].attention_norm);
    add_norm(out.output_norm, in[l].output_norm);
  }
  std::vector<TensorRequest> requests;
  for (const auto& [view, host] : vectors) {
    requests.push_back({view, ElementType::f32, 1, std::int64_t(host->size())});
  }
  vectors_ = allocate_tensors(*backend_, requests);
  for (const auto& [view, host] : vectors) upload(*stream_, std::span(*host), *view);
  word_embeddings_ = compute_->upload(model_.word_embeddings());
  position_embeddings_ = compute_->upload(model_.position_embeddings());
  token_type_embeddings_ = compute_->upload(model_.token_type_embeddings());
  stream_->synchronize();
}

std::vector<float> BertEncoder::embed(std::span<const std::vector<std::int32_t>> sequences) {
  const BertConfig& c = model_.config();
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const std::size_t length = sequences[s].size();
    if (length < 1 || length > std::size_t(c.max_seq_length)) {
      throw Error(
          fmt::format("sequence {} has {} tokens; allowed: 1 to {}", s, length, c.max_seq_length));
    }
  }
  const auto h = std::size_t(c.hidden_size);
  std::vector<float> out(sequences.size() * h);
  for (std::size_t first = 0; first < sequences.size();) {
    // As many sequences as fit in batch_tokens, and at least one.
    std::size_t end = first + 1;
    std::size_t tokens = sequences[first].size();
    while (end < sequences.size() && tokens + sequences[end].size() <= std::size_t(batch_tokens_)) {
      tokens += sequences[end++].size();
    }
    forward(sequences.subspan(first, end - first));
    std::size_t row = 0;
    for (std::size_t s = first; s < end; ++s) {
      const std::size_t length = sequences[s].size();
      std::vector<double> sum(h, 0.0);
      for (std::size_t t = row; t < row + length; ++t) {
        for (std::size_t j = 0; j < h; ++j) sum[j] += x_host_[t * h + j];
      }
      row += length;
      double norm = 0.0;
      for (double& v : sum) {
        v /= double(length);
        norm += v * v;
      }
      const double scale = 1.0 / std::max(std::sqrt(norm), kNormEps);
      for (std::size_t j = 0; j < h; ++j) out[s * h + j] = float(sum[j] * scale);
    }
    first = end;
  }
  return out;
}

void BertEncoder::linear(const DeviceLinear& layer, const Tensor& in, const Tensor& out) {
  compute_->matmul(*stream_, *layer.weight, in, out);
  compute_->add_bias(*stream_, out, layer.bias);
}

void BertEncoder::forward(std::span<const std::vector<std::int32_t>> batch) {
  embeddings(batch);
  for (const DeviceLayer& layer : layers_) {
    attention(layer);
    feed_forward(layer);
  }
  x_host_.resize(std::size_t(n_ * model_.config().hidden_size));
  download(*stream_, rows(x_), std::span(x_host_));
  stream_->synchronize();
}

void BertEncoder::embeddings(std::span<const std::vector<std::int32_t>> batch) {
  ids_host_.clear();
  positions_host_.clear();
  lengths_.clear();
  for (const std::vector<std::int32_t>& sequence : batch) {
    ids_host_.insert(ids_host_.end(), sequence.begin(), sequence.end());
    for (std::size_t p = 0; p < sequence.size(); ++p) positions_host_.push_back(std::int32_t(p));
    lengths_.push_back(std::int64_t(sequence.size()));
  }
  n_ = std::int64_t(ids_host_.size());
  types_host_.assign(ids_host_.size(), 0);  // one segment
  Stream& stream = *stream_;
  upload(stream, std::span<const std::int32_t>(ids_host_), rows(ids_));
  upload(stream, std::span<const std::int32_t>(positions_host_), rows(positions_));
  upload(stream, std::span<const std::int32_t>(types_host_), rows(types_));
  const Tensor x = rows(x_), scratch = rows(projected_);
  compute_->embedding(stream, *word_embeddings_, rows(ids_), x);
  compute_->embedding(stream, *position_embeddings_, rows(positions_), scratch);
  compute_->add(stream, x, scratch);
  compute_->embedding(stream, *token_type_embeddings_, rows(types_), scratch);
  compute_->add(stream, x, scratch);
  compute_->layer_norm(stream, x, embedding_norm_.weight, embedding_norm_.bias,
                       model_.config().layer_norm_eps, x);
}

void BertEncoder::attention(const DeviceLayer& layer) {
  const BertConfig& c = model_.config();
  Stream& stream = *stream_;
  const Tensor x = rows(x_), q = rows(q_), k = rows(k_), v = rows(v_);
  linear(layer.query, x, q);
  linear(layer.key, x, k);
  linear(layer.value, x, v);
  const Tensor context = rows(context_);
  compute_->encoder_attention(stream, q, k, v, lengths_, c.n_heads, c.head_dim(),
                              float(1.0 / std::sqrt(double(c.head_dim()))), context);
  const Tensor projected = rows(projected_);
  linear(layer.attention_output, context, projected);
  compute_->add(stream, projected, x);
  compute_->layer_norm(stream, projected, layer.attention_norm.weight, layer.attention_norm.bias,
                       c.layer_norm_eps, x);
}

void BertEncoder::feed_forward(const DeviceLayer& layer) {
  const BertConfig& c = model_.config();
  Stream& stream = *stream_;
  const Tensor x = rows(x_), hidden = rows(hidden_), out = rows(projected_);
  linear(layer.intermediate, x, hidden);
  compute_->gelu(stream, hidden);
  linear(layer.output, hidden, out);
  compute_->add(stream, out, x);
  compute_->layer_norm(stream, out, layer.output_norm.weight, layer.output_norm.bias,
                       c.layer_norm_eps, x);
}

}  // namespace cocktail::models
