#include "cocktail/models/bert_encoder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cocktail/error.hpp"

namespace cocktail::models {
namespace {

// sentence-transformers' Normalize: x / max(|x|, eps).
constexpr double kNormEps = 1e-12;

}  // namespace

BertEncoder::BertEncoder(const BertModel& model, Compute& compute, std::int64_t batch_tokens)
    : model_(model), compute_(compute), batch_tokens_(batch_tokens) {
  if (batch_tokens < 1) throw Error(fmt::format("batch of {} tokens; at least 1", batch_tokens));
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
        for (std::size_t j = 0; j < h; ++j) sum[j] += x_[t * h + j];
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

std::span<float> BertEncoder::rows(std::vector<float>& buffer, std::int64_t width) const {
  const auto size = std::size_t(n_ * width);
  if (buffer.size() < size) buffer.resize(size);
  return {buffer.data(), size};
}

void BertEncoder::linear(const Linear& layer, std::span<const float> in, std::span<float> out) {
  compute_.matmul(layer.weight, in, n_, out);
  compute_.add_bias(out, layer.bias);
}

void BertEncoder::forward(std::span<const std::vector<std::int32_t>> batch) {
  embeddings(batch);
  for (const BertLayer& layer : model_.layers()) {
    attention(layer);
    feed_forward(layer);
  }
}

void BertEncoder::embeddings(std::span<const std::vector<std::int32_t>> batch) {
  ids_.clear();
  positions_.clear();
  lengths_.clear();
  for (const std::vector<std::int32_t>& sequence : batch) {
    ids_.insert(ids_.end(), sequence.begin(), sequence.end());
    for (std::size_t p = 0; p < sequence.size(); ++p) positions_.push_back(std::int32_t(p));
    lengths_.push_back(std::int64_t(sequence.size()));
  }
  n_ = std::int64_t(ids_.size());
  types_.assign(ids_.size(), 0);  // one segment
  const std::int64_t h = model_.config().hidden_size;
  const std::span<float> x = rows(x_, h);
  const std::span<float> scratch = rows(projected_, h);
  compute_.embedding(model_.word_embeddings(), ids_, x);
  compute_.embedding(model_.position_embeddings(), positions_, scratch);
  compute_.add(x, scratch);
  compute_.embedding(model_.token_type_embeddings(), types_, scratch);
  compute_.add(x, scratch);
  const LayerNormWeights& norm = model_.embedding_norm();
  compute_.layer_norm(x, norm.weight, norm.bias, model_.config().layer_norm_eps, x);
}

void BertEncoder::attention(const BertLayer& layer) {
  const BertConfig& c = model_.config();
  const std::int64_t h = c.hidden_size;
  const std::span<float> x = rows(x_, h);
  const std::span<float> q = rows(q_, h), k = rows(k_, h), v = rows(v_, h);
  linear(layer.query, x, q);
  linear(layer.key, x, k);
  linear(layer.value, x, v);
  const std::span<float> context = rows(context_, h);
  compute_.encoder_attention(q, k, v, lengths_, c.n_heads, c.head_dim(),
                             float(1.0 / std::sqrt(double(c.head_dim()))), context);
  const std::span<float> projected = rows(projected_, h);
  linear(layer.attention_output, context, projected);
  compute_.add(projected, x);
  compute_.layer_norm(projected, layer.attention_norm.weight, layer.attention_norm.bias,
                      c.layer_norm_eps, x);
}

void BertEncoder::feed_forward(const BertLayer& layer) {
  const BertConfig& c = model_.config();
  const std::span<float> x = rows(x_, c.hidden_size);
  const std::span<float> hidden = rows(hidden_, c.intermediate_size);
  linear(layer.intermediate, x, hidden);
  compute_.gelu(hidden);
  const std::span<float> out = rows(projected_, c.hidden_size);
  linear(layer.output, hidden, out);
  compute_.add(out, x);
  compute_.layer_norm(out, layer.output_norm.weight, layer.output_norm.bias, c.layer_norm_eps, x);
}

}  // namespace cocktail::models
