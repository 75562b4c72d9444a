#include "cocktail/models/llama_model.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cocktail/dequantize.hpp"
#include "cocktail/error.hpp"
#include "cocktail/logging.hpp"
#include "cocktail/models/gguf_tokenizer.hpp"
#include "cocktail/stopwatch.hpp"
#include "cocktail/tensor_allocation.hpp"

namespace cocktail::models {
namespace {

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
    if (h.qkv_bias) {
      layer.q_bias = vector_of(file_, p + "attn_q.bias", h.n_embd);
      layer.k_bias = vector_of(file_, p + "attn_k.bias", kv);
      layer.v_bias = vector_of(file_, p + "attn_v.bias", kv);
    }
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

LlamaWeights::LlamaWeights(const LlamaModel& model, std::shared_ptr<Backend> backend)
    : model_(&model), backend_(std::move(backend)) {
  if (!backend_) throw Error("LlamaWeights: no backend");
  compute_ = backend_->make_compute();
  const Stopwatch watch;
  const LlamaHyperparameters& h = model.hparams();
  layers_.resize(model.layers().size());
  const std::int64_t kv = std::int64_t(h.n_kv_heads) * h.head_dim;
  std::vector<TensorRequest> vectors{{&output_norm_, ElementType::f32, 1, h.n_embd}};
  for (LlamaLayerWeights& layer : layers_) {
    vectors.push_back({&layer.attn_norm, ElementType::f32, 1, h.n_embd});
    vectors.push_back({&layer.ffn_norm, ElementType::f32, 1, h.n_embd});
    if (!h.qkv_bias) continue;
    vectors.push_back({&layer.q_bias, ElementType::f32, 1, h.n_embd});
    vectors.push_back({&layer.k_bias, ElementType::f32, 1, kv});
    vectors.push_back({&layer.v_bias, ElementType::f32, 1, kv});
  }
  vectors_ = allocate_tensors(*backend_, vectors);
  const std::shared_ptr<Stream> stream = backend_->make_stream();
  upload(*stream, std::span(model.output_norm()), output_norm_);
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const LlamaLayer& in = model.layers()[l];
    LlamaLayerWeights& out = layers_[l];
    upload(*stream, std::span(in.attn_norm), out.attn_norm);
    upload(*stream, std::span(in.ffn_norm), out.ffn_norm);
    if (h.qkv_bias) {
      upload(*stream, std::span(in.q_bias), out.q_bias);
      upload(*stream, std::span(in.k_bias), out.k_bias);
      upload(*stream, std::span(in.v_bias), out.v_bias);
    }
    out.q = compute_->upload(in.q);
    out.k = compute_->upload(in.k);
    out.v = compute_->upload(in.v);
    out.output = compute_->upload(in.output);
    out.gate = compute_->upload(in.gate);
    out.up = compute_->upload(in.up);
    out.down = compute_->upload(in.down);
  }
  token_embd_ = compute_->upload(model.token_embedding());
  if (!model.output_tied()) output_ = compute_->upload(model.output());
  stream->synchronize();
  log().debug("the model's weights uploaded to the {} backend in {:.0f} ms", backend_->name(),
              watch.seconds() * 1e3);
}

LlamaRunner::LlamaRunner(const LlamaWeights& weights, int max_block)
    : weights_(weights),
      model_(weights.model()),
      compute_(weights.compute()),
      max_block_(max_block) {
  if (max_block < 1) throw Error(fmt::format("prefill block of {} tokens; at least 1", max_block));
  const LlamaHyperparameters& h = model_.hparams();
  const std::int64_t kv = h.n_kv_heads * h.head_dim;
  const TensorRequest tensors[] = {{&ids_, ElementType::i32, max_block, 1},
                                   {&positions_, ElementType::i32, max_block, 1},
                                   {&x_, ElementType::f32, max_block, h.n_embd},
                                   {&norm_, ElementType::f32, max_block, h.n_embd},
                                   {&q_, ElementType::f32, max_block, h.n_embd},
                                   {&attn_, ElementType::f32, max_block, h.n_embd},
                                   {&proj_, ElementType::f32, max_block, h.n_embd},
                                   {&k_, ElementType::f32, max_block, kv},
                                   {&v_, ElementType::f32, max_block, kv},
                                   {&gate_, ElementType::f32, max_block, h.n_ff},
                                   {&up_, ElementType::f32, max_block, h.n_ff},
                                   {&logits_, ElementType::f32, 1, h.n_vocab}};
  activations_ = allocate_tensors(weights.backend(), tensors);
  host_positions_.resize(std::size_t(max_block));
}

void LlamaRunner::prefill(Session& session, std::span<const std::int32_t> tokens,
                          std::span<float> logits, const Progress& progress) {
  const auto total = std::int64_t(tokens.size());
  capturing_ = !capture_layers_.empty();
  if (capturing_) {
    const std::int64_t first = session.store().n_tokens();
    if (capture_from_ < first) {
      throw Error(
          fmt::format("the queries to capture start at position {}, before this "
                      "prefill's first position {}",
                      capture_from_, first));
    }
    // Room for the queries of positions capture_from_ on, in every capture layer.
    const std::int64_t rows = std::max<std::int64_t>(first + total - capture_from_, 0);
    captured_.assign(capture_layers_.size(), Tensor{});
    std::vector<TensorRequest> requests;
    for (Tensor& t : captured_) {
      requests.push_back({&t, ElementType::f32, rows, model_.hparams().n_embd});
    }
    captured_memory_ = allocate_tensors(weights_.backend(), requests);
  }
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
  timing_ = true;
  timed_count_ = 0;
  try {
    run_block(session, std::span<const std::int32_t>(&token, 1), logits);
  } catch (...) {
    timing_ = false;
    throw;
  }
  timing_ = false;
  DecodeTimes step{.steps = 1};
  add_timed_parts(session.stream(), step);
  step.other_s = watch.seconds() - step.total_s();
  decode_times_ += step;
}

template <class Work>
void LlamaRunner::timed(double DecodeTimes::*part, Work&& work) {
  if (!timing_) return work();
  if (timed_count_ == timed_work_.size()) {
    timed_work_.push_back({part, stream_->make_event(), stream_->make_event()});
  }
  TimedWork& piece = timed_work_[timed_count_++];
  piece.part = part;
  stream_->record(*piece.start);
  work();
  stream_->record(*piece.end);
}

// After the step's logits came back, so every event has been reached.
void LlamaRunner::add_timed_parts(const Stream& stream, DecodeTimes& step) {
  for (std::size_t i = 0; i < timed_count_; ++i) {
    const TimedWork& w = timed_work_[i];
    step.*(w.part) += stream.seconds_between(*w.start, *w.end);
  }
  timed_count_ = 0;
}

void LlamaRunner::run_block(Session& session, std::span<const std::int32_t> tokens,
                            std::span<float> logits) {
  const LlamaHyperparameters& h = model_.hparams();
  const auto n = std::int64_t(tokens.size());
  const std::int64_t first = session.store().n_tokens();
  for (std::int64_t i = 0; i < n; ++i) host_positions_[std::size_t(i)] = std::int32_t(first + i);
  stream_ = &session.stream();
  Stream& stream = *stream_;
  upload(stream, tokens, ids_.row_range(0, n));
  upload(stream, std::span<const std::int32_t>(host_positions_).first(std::size_t(n)),
         positions_.row_range(0, n));
  compute_.embedding(stream, weights_.token_embedding(), ids_.row_range(0, n), x_.row_range(0, n));
  for (int l = 0; l < h.n_layers; ++l) {
    attention_block(session, l, n);
    ffn_block(weights_.layers()[std::size_t(l)], n);
  }
  if (!logits.empty()) output_logits(n, logits);
}

void LlamaRunner::attention_block(Session& session, int l, std::int64_t n) {
  const LlamaHyperparameters& h = model_.hparams();
  const LlamaLayerWeights& layer = weights_.layers()[std::size_t(l)];
  Stream& stream = *stream_;
  const Tensor x = x_.row_range(0, n), norm = norm_.row_range(0, n), q = q_.row_range(0, n);
  const Tensor k = k_.row_range(0, n), v = v_.row_range(0, n);
  const Tensor attn = attn_.row_range(0, n), proj = proj_.row_range(0, n);
  const Tensor positions = positions_.row_range(0, n);

  compute_.rms_norm(stream, x, layer.attn_norm, h.rms_eps, norm);
  const MatmulOutput qkv[] = {{layer.q.get(), q}, {layer.k.get(), k}, {layer.v.get(), v}};
  timed(&DecodeTimes::matmul_s, [&] { compute_.matmul_shared_input(stream, norm, qkv); });
  if (h.qkv_bias) {
    compute_.add_bias(stream, q, layer.q_bias);
    compute_.add_bias(stream, k, layer.k_bias);
    compute_.add_bias(stream, v, layer.v_bias);
  }
  compute_.rope(stream, q, positions, h.n_heads, h.head_dim, h.rope_base, h.rope_style);
  compute_.rope(stream, k, positions, h.n_kv_heads, h.head_dim, h.rope_base, h.rope_style);
  keep_captured_queries(l, n);
  session.append(l, k, v);
  if (n == 1) {
    timed(&DecodeTimes::attention_s, [&] { session.decode_attention(l, q, h.n_heads, attn); });
  } else {
    session.prefill_attention(l, q, h.n_heads, attn);
  }
  timed(&DecodeTimes::matmul_s, [&] { compute_.matmul(stream, *layer.output, attn, proj); });
  compute_.add(stream, x, proj);
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
  captured_.clear();
}

void LlamaRunner::keep_captured_queries(int layer, std::int64_t n) {
  if (!capturing_) return;
  const auto slot = std::find(capture_layers_.begin(), capture_layers_.end(), layer);
  if (slot == capture_layers_.end()) return;
  // The block's rows at positions capture_from_ on, to their rows of the capture.
  const std::int64_t block_first = host_positions_[0];
  const std::int64_t skip = std::clamp<std::int64_t>(capture_from_ - block_first, 0, n);
  if (skip == n) return;
  const Tensor& kept = captured_[std::size_t(slot - capture_layers_.begin())];
  stream_->copy(q_.row_range(skip, n - skip),
                kept.row_range(block_first + skip - capture_from_, n - skip));
}
QueryAttention LlamaRunner::query_attention(const Session& session, std::int64_t n_context,
                                            std::span<const int> layers) const {
  const LlamaHyperparameters& h = model_.hparams();
  const std::int64_t n_tokens = session.store().n_tokens();
  const std::size_t per_layer = std::size_t(h.n_heads) * std::size_t(n_context);
  QueryAttention out{{layers.begin(), layers.end()}, h.n_heads, n_context, {}};
  out.mass.resize(layers.size() * per_layer);
  Tensor mass;
  const TensorRequest request{&mass, ElementType::f32, h.n_heads, n_tokens};
  const std::shared_ptr<Buffer> mass_memory =
      allocate_tensors(weights_.backend(), std::span(&request, 1));
  std::vector<float> host(std::size_t(mass.elements()));
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto slot = std::find(capture_layers_.begin(), capture_layers_.end(), layers[i]);
    if (slot == capture_layers_.end() || captured_.empty()) {
      throw Error(
          fmt::format("query attention: the queries of layer {} were not captured", layers[i]));
    }
    const Tensor& q = captured_[std::size_t(slot - capture_layers_.begin())];
    if (q.rows == 0 || n_context > n_tokens - q.rows) {
      throw Error(
          fmt::format("query attention: {} captured query tokens and {} context tokens "
                      "do not fit the {} tokens prefilled",
                      q.rows, n_context, n_tokens));
    }
    session.attention_mass(layers[i], q, h.n_heads, mass);
    download(session.stream(), mass, std::span(host));
    session.stream().synchronize();
    for (int head = 0; head < h.n_heads; ++head) {
      const auto from = host.begin() + std::ptrdiff_t(std::size_t(head) * std::size_t(n_tokens));
      std::copy(from, from + n_context,
                out.mass.begin() + std::ptrdiff_t(i * per_layer + std::size_t(head) * n_context));
    }
  }
  return out;
}

void LlamaRunner::ffn_block(const LlamaLayerWeights& layer, std::int64_t n) {
  const LlamaHyperparameters& h = model_.hparams();
  Stream& stream = *stream_;
  const Tensor x = x_.row_range(0, n), norm = norm_.row_range(0, n);
  const Tensor gate = gate_.row_range(0, n), up = up_.row_range(0, n);
  const Tensor proj = proj_.row_range(0, n);
  compute_.rms_norm(stream, x, layer.ffn_norm, h.rms_eps, norm);
  const MatmulOutput gate_up[] = {{layer.gate.get(), gate}, {layer.up.get(), up}};
  timed(&DecodeTimes::matmul_s, [&] { compute_.matmul_shared_input(stream, norm, gate_up); });
  compute_.silu_mul(stream, gate, up);
  timed(&DecodeTimes::matmul_s, [&] { compute_.matmul(stream, *layer.down, gate, proj); });
  compute_.add(stream, x, proj);
}

// Only the last token's logits are needed: generation continues from it.
void LlamaRunner::output_logits(std::int64_t n, std::span<float> logits) {
  const LlamaHyperparameters& h = model_.hparams();
  if (std::int64_t(logits.size()) != h.n_vocab) {
    throw Error(fmt::format("logits buffer of {} floats; the model has {} tokens", logits.size(),
                            h.n_vocab));
  }
  Stream& stream = *stream_;
  const Tensor norm = norm_.row_range(0, 1);
  compute_.rms_norm(stream, x_.row_range(n - 1, 1), weights_.output_norm(), h.rms_eps, norm);
  timed(&DecodeTimes::logits_s, [&] { compute_.matmul(stream, weights_.output(), norm, logits_); });
  download(stream, logits_, logits);
  stream.synchronize();
}

}  // namespace cocktail::models
