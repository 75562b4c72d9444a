#include "cocktail/models/llama_model.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cocktail/dequantize.hpp"
#include "cocktail/error.hpp"
#include "cocktail/logging.hpp"
#include "cocktail/models/gguf_tokenizer.hpp"
#include "cocktail/stopwatch.hpp"

namespace cocktail::models {
namespace {

// Points `slot` at `target` for its lifetime and back to nothing after, also when an exception
// leaves the scope.
template <class T>
class PointedAt {
 public:
  PointedAt(T*& slot, T& target) : slot_(slot) { slot_ = &target; }
  ~PointedAt() { slot_ = nullptr; }
  PointedAt(const PointedAt&) = delete;
  PointedAt& operator=(const PointedAt&) = delete;

 private:
  T*& slot_;
};

[[noreturn]] void reject(const GgufFile& file, const std::string& what) {
  throw Error(fmt::format("{}: {}", file.path().string(), what));
}

std::string dims_text(const std::vector<std::int64_t>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

const GgufTensor& shaped(const GgufFile& file, const std::string& name,
                         std::vector<std::int64_t> dims) {
  const GgufTensor* t = file.find_tensor(name);
  if (!t) reject(file, fmt::format("tensor '{}' is missing", name));
  if (t->dims != dims) {
    reject(file, fmt::format("tensor '{}' has shape {}; expected {}", name, dims_text(t->dims),
                             dims_text(dims)));
  }
  return *t;
}

// A matrix of `rows` rows of `cols` elements (GGUF dims [cols, rows]).
WeightView matrix(const GgufFile& file, const std::string& name, int cols, int rows) {
  const GgufTensor& t = shaped(file, name, {cols, rows});
  return {t.type, t.data, rows, cols};
}

std::vector<float> vector_of(const GgufFile& file, const std::string& name, int n) {
  const GgufTensor& t = shaped(file, name, {n});
  std::vector<float> out(std::size_t(n), 0.0f);
  dequantize_row(t.type, t.data, n, out.data());
  return out;
}

template <typename T>
std::span<T> rows_of(std::vector<T>& buffer, std::int64_t n, std::int64_t width) {
  return {buffer.data(), std::size_t(n * width)};
}

}  // namespace

LlamaModel::LlamaModel(const std::filesystem::path& path)
    : file_(path),
      hparams_(LlamaHyperparameters::from_gguf(file_)),
      tokenizer_(tokenizer_from_gguf(file_)),
      chat_template_(chat_template_from_gguf(file_)) {
  const LlamaHyperparameters& h = hparams_;
  const int kv = h.n_kv_heads * h.head_dim;
  token_embd_ = matrix(file_, "token_embd.weight", h.n_embd, h.n_vocab);
  output_norm_ = vector_of(file_, "output_norm.weight", h.n_embd);
  // Small models tie the output matrix to the token embedding and store it once.
  output_ = file_.find_tensor("output.weight") ? matrix(file_, "output.weight", h.n_embd, h.n_vocab)
                                               : token_embd_;
  for (int l = 0; l < h.n_layers; ++l) {
    const std::string p = fmt::format("blk.{}.", l);
    LlamaLayer layer;
    layer.attn_norm = vector_of(file_, p + "attn_norm.weight", h.n_embd);
    layer.ffn_norm = vector_of(file_, p + "ffn_norm.weight", h.n_embd);
    layer.q = matrix(file_, p + "attn_q.weight", h.n_embd, h.n_embd);
    layer.k = matrix(file_, p + "attn_k.weight", h.n_embd, kv);
    layer.v = matrix(file_, p + "attn_v.weight", h.n_embd, kv);
    layer.output = matrix(file_, p + "attn_output.weight", h.n_embd, h.n_embd);
    layer.gate = matrix(file_, p + "ffn_gate.weight", h.n_embd, h.n_ff);
    layer.up = matrix(file_, p + "ffn_up.weight", h.n_embd, h.n_ff);
    layer.down = matrix(file_, p + "ffn_down.weight", h.n_ff, h.n_embd);
    layers_.push_back(std::move(layer));
  }
}

LlamaWeights::LlamaWeights(const LlamaModel& model, std::shared_ptr<Compute> compute)
    : model_(&model), compute_(std::move(compute)), layers_(model.layers()) {
  if (!compute_) throw Error("LlamaWeights: no Compute");
  const Stopwatch watch;
  for (LlamaLayer& layer : layers_) {
    for (WeightView* w :
         {&layer.q, &layer.k, &layer.v, &layer.output, &layer.gate, &layer.up, &layer.down}) {
      *w = prepared(*w);
    }
  }
  output_ = prepared(model.output());
  log().debug("{} of the model's matrices copied for the {} compute in {:.0f} ms", copies_.size(),
              compute_->name(), watch.seconds() * 1e3);
}

WeightView LlamaWeights::prepared(const WeightView& w) {
  WeightView view = w;
  if (std::unique_ptr<PreparedWeights> copy = compute_->prepare(w)) {
    view.prepared = copy.get();
    copies_.push_back(std::move(copy));
  }
  return view;
}

LlamaRunner::LlamaRunner(const LlamaWeights& weights, int max_block)
    : weights_(weights),
      model_(weights.model()),
      compute_(weights.compute()),
      max_block_(max_block) {
  if (max_block < 1) throw Error(fmt::format("prefill block of {} tokens; at least 1", max_block));
  const LlamaHyperparameters& h = model_.hparams();
  const auto rows = std::size_t(max_block);
  const auto kv = std::size_t(h.n_kv_heads * h.head_dim);
  positions_.resize(rows);
  x_.resize(rows * std::size_t(h.n_embd));
  norm_.resize(x_.size());
  q_.resize(x_.size());
  attn_.resize(x_.size());
  proj_.resize(x_.size());
  k_.resize(rows * kv);
  v_.resize(rows * kv);
  gate_.resize(rows * std::size_t(h.n_ff));
  up_.resize(gate_.size());
}

void LlamaRunner::prefill(Session& session, std::span<const std::int32_t> tokens,
                          std::span<float> logits, const Progress& progress) {
  const auto total = std::int64_t(tokens.size());
  capturing_ = !capture_layers_.empty();
  for (std::int64_t first = 0; first < total; first += max_block_) {
    const std::int64_t n = std::min<std::int64_t>(max_block_, total - first);
    const bool last = first + n == total;
    run_block(session, tokens.subspan(std::size_t(first), std::size_t(n)),
              last ? logits : std::span<float>{});
    if (progress) progress(first + n, total);
  }
  capturing_ = false;
}

DecodeTimes& DecodeTimes::operator+=(const DecodeTimes& o) {
  steps += o.steps;
  matmul_s += o.matmul_s;
  attention_s += o.attention_s;
  logits_s += o.logits_s;
  other_s += o.other_s;
  return *this;
}

void LlamaRunner::step(Session& session, std::int32_t token, std::span<float> logits) {
  const Stopwatch watch;
  DecodeTimes step{.steps = 1};
  {
    const PointedAt timing(step_times_, step);
    run_block(session, std::span<const std::int32_t>(&token, 1), logits);
  }
  step.other_s = watch.seconds() - step.total_s();
  decode_times_ += step;
}

template <class Work>
void LlamaRunner::timed(double DecodeTimes::*part, Work&& work) {
  if (!step_times_) return work();
  const Stopwatch watch;
  work();
  step_times_->*part += watch.seconds();
}

void LlamaRunner::run_block(Session& session, std::span<const std::int32_t> tokens,
                            std::span<float> logits) {
  const LlamaHyperparameters& h = model_.hparams();
  const auto n = std::int64_t(tokens.size());
  const std::int64_t first = session.store().n_tokens();
  for (std::int64_t i = 0; i < n; ++i) positions_[std::size_t(i)] = std::int32_t(first + i);
  compute_.embedding(model_.token_embedding(), tokens, rows_of(x_, n, h.n_embd));
  for (int l = 0; l < h.n_layers; ++l) {
    attention_block(session, l, n);
    ffn_block(weights_.layers()[std::size_t(l)], n);
  }
  if (!logits.empty()) output_logits(n, logits);
}

void LlamaRunner::attention_block(Session& session, int l, std::int64_t n) {
  const LlamaHyperparameters& h = model_.hparams();
  const LlamaLayer& layer = weights_.layers()[std::size_t(l)];
  const std::int64_t kv = h.n_kv_heads * h.head_dim;
  const auto x = rows_of(x_, n, h.n_embd);
  const auto norm = rows_of(norm_, n, h.n_embd);
  const auto q = rows_of(q_, n, h.n_embd);
  const auto k = rows_of(k_, n, kv);
  const auto v = rows_of(v_, n, kv);
  const auto attn = rows_of(attn_, n, h.n_embd);
  const auto proj = rows_of(proj_, n, h.n_embd);
  const std::span<const std::int32_t> positions(positions_.data(), std::size_t(n));

  compute_.rms_norm(x, layer.attn_norm, h.rms_eps, norm);
  const MatmulOutput qkv[] = {{layer.q, q}, {layer.k, k}, {layer.v, v}};
  timed(&DecodeTimes::matmul_s, [&] { compute_.matmul_shared_input(norm, n, qkv); });
  compute_.rope(q, positions, h.n_heads, h.head_dim, h.rope_base);
  compute_.rope(k, positions, h.n_kv_heads, h.head_dim, h.rope_base);
  keep_captured_queries(l, n);
  session.append(l, k, v, n);
  if (n == 1) {
    timed(&DecodeTimes::attention_s, [&] { session.decode_attention(l, q, h.n_heads, attn); });
  } else {
    session.prefill_attention(l, q, n, h.n_heads, attn);
  }
  timed(&DecodeTimes::matmul_s, [&] { compute_.matmul(layer.output, attn, n, proj); });
  compute_.add(x, proj);
}

void LlamaRunner::capture_queries(std::int64_t first_position, std::vector<int> layers) {
  const int n_layers = model_.hparams().n_layers;
  for (int l : layers) {
    if (l < 0 || l >= n_layers) {
      throw Error(fmt::format(
          "cannot capture the queries of layer {}: the model has layers 0 to {}", l, n_layers - 1));
    }
  }
  capture_from_ = first_position;
  capture_layers_ = std::move(layers);
  captured_.assign(capture_layers_.size(), {});
}

void LlamaRunner::keep_captured_queries(int layer, std::int64_t n) {
  if (!capturing_) return;
  const auto slot = std::find(capture_layers_.begin(), capture_layers_.end(), layer);
  if (slot == capture_layers_.end()) return;
  const std::size_t row = std::size_t(model_.hparams().n_embd);
  std::vector<float>& kept = captured_[std::size_t(slot - capture_layers_.begin())];
  for (std::int64_t i = 0; i < n; ++i) {
    if (positions_[std::size_t(i)] < capture_from_) continue;
    const auto first = q_.begin() + std::ptrdiff_t(std::size_t(i) * row);
    kept.insert(kept.end(), first, first + std::ptrdiff_t(row));
  }
}

QueryAttention LlamaRunner::query_attention(const Session& session, std::int64_t n_context,
                                            std::span<const int> layers) const {
  const LlamaHyperparameters& h = model_.hparams();
  const std::int64_t n_tokens = session.store().n_tokens();
  const std::size_t per_layer = std::size_t(h.n_heads) * std::size_t(n_context);
  QueryAttention out{{layers.begin(), layers.end()}, h.n_heads, n_context, {}};
  out.mass.resize(layers.size() * per_layer);
  std::vector<float> mass(std::size_t(h.n_heads) * std::size_t(n_tokens));
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto slot = std::find(capture_layers_.begin(), capture_layers_.end(), layers[i]);
    if (slot == capture_layers_.end()) {
      throw Error(
          fmt::format("query attention: the queries of layer {} were not captured", layers[i]));
    }
    const std::vector<float>& q = captured_[std::size_t(slot - capture_layers_.begin())];
    const auto n_query = std::int64_t(q.size() / std::size_t(h.n_embd));
    if (n_query == 0 || n_context > n_tokens - n_query) {
      throw Error(
          fmt::format("query attention: {} captured query tokens and {} context tokens "
                      "do not fit the {} tokens prefilled",
                      n_query, n_context, n_tokens));
    }
    session.attention_mass(layers[i], q, n_query, h.n_heads, mass);
    for (int head = 0; head < h.n_heads; ++head) {
      const auto from = mass.begin() + std::ptrdiff_t(std::size_t(head) * std::size_t(n_tokens));
      std::copy(from, from + n_context,
                out.mass.begin() + std::ptrdiff_t(i * per_layer + std::size_t(head) * n_context));
    }
  }
  return out;
}

void LlamaRunner::ffn_block(const LlamaLayer& layer, std::int64_t n) {
  const LlamaHyperparameters& h = model_.hparams();
  const auto x = rows_of(x_, n, h.n_embd);
  const auto norm = rows_of(norm_, n, h.n_embd);
  const auto gate = rows_of(gate_, n, h.n_ff);
  const auto up = rows_of(up_, n, h.n_ff);
  const auto proj = rows_of(proj_, n, h.n_embd);
  compute_.rms_norm(x, layer.ffn_norm, h.rms_eps, norm);
  const MatmulOutput gate_up[] = {{layer.gate, gate}, {layer.up, up}};
  timed(&DecodeTimes::matmul_s, [&] { compute_.matmul_shared_input(norm, n, gate_up); });
  compute_.silu_mul(gate, up);
  timed(&DecodeTimes::matmul_s, [&] { compute_.matmul(layer.down, gate, n, proj); });
  compute_.add(x, proj);
}

// Only the last token's logits are needed: generation continues from it.
void LlamaRunner::output_logits(std::int64_t n, std::span<float> logits) {
  const LlamaHyperparameters& h = model_.hparams();
  if (std::int64_t(logits.size()) != h.n_vocab) {
    throw Error(fmt::format("logits buffer of {} floats; the model has {} tokens", logits.size(),
                            h.n_vocab));
  }
  const auto last =
      std::span<const float>(x_).subspan(std::size_t((n - 1) * h.n_embd), std::size_t(h.n_embd));
  const auto norm = rows_of(norm_, 1, h.n_embd);
  compute_.rms_norm(last, model_.output_norm(), h.rms_eps, norm);
  timed(&DecodeTimes::logits_s, [&] { compute_.matmul(weights_.output(), norm, 1, logits); });
}

}  // namespace cocktail::models
