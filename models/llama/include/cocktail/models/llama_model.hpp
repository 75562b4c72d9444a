#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "cocktail/backend.hpp"
#include "cocktail/compute.hpp"
#include "cocktail/models/bpe_tokenizer.hpp"
#include "cocktail/models/chat_template.hpp"
#include "cocktail/models/gguf_file.hpp"
#include "cocktail/models/llama_hparams.hpp"
#include "cocktail/session.hpp"

namespace cocktail::models {

// One transformer block's weights: views into the model file, except the norm weights and the
// biases.
struct LlamaLayer {
  std::vector<float> attn_norm;
  std::vector<float> ffn_norm;
  std::vector<float> q_bias, k_bias, v_bias;  // empty unless hparams().qkv_bias
  WeightView q, k, v, output;
  WeightView gate, up, down;
};

// A Llama-family decoder (RMSNorm, RoPE, GQA, SwiGLU, tied or separate output matrix) over a
// GGUF file, Qwen2's included (LlamaHyperparameters says what differs). The weights stay
// quantized in the file's mapping; matmuls dequantize on the fly.
// Opening checks every tensor's presence, type and shape, naming the first that is wrong, and
// loads the tokenizer and chat template the file carries.
class LlamaModel {
 public:
  explicit LlamaModel(const std::filesystem::path& path);

  const GgufFile& file() const { return file_; }
  const LlamaHyperparameters& hparams() const { return hparams_; }
  const std::vector<LlamaLayer>& layers() const { return layers_; }
  const WeightView& token_embedding() const { return token_embd_; }
  // The output matrix: the token embedding's own view when the model ties the two.
  const WeightView& output() const { return output_; }
  bool output_tied() const { return output_.data == token_embd_.data; }
  const std::vector<float>& output_norm() const { return output_norm_; }
  const BpeTokenizer& tokenizer() const { return tokenizer_; }
  const ChatTemplate& chat_template() const { return chat_template_; }

 private:
  GgufFile file_;
  LlamaHyperparameters hparams_;
  std::vector<LlamaLayer> layers_;
  WeightView token_embd_;
  WeightView output_;
  std::vector<float> output_norm_;
  BpeTokenizer tokenizer_;
  ChatTemplate chat_template_;
};

// One transformer block on a backend's device.
struct LlamaLayerWeights {
  Tensor attn_norm, ffn_norm;     // [1][n_embd]
  Tensor q_bias, k_bias, v_bias;  // [1][q, k, v width]; empty unless hparams().qkv_bias
  std::unique_ptr<Weights> q, k, v, output;
  std::unique_ptr<Weights> gate, up, down;
};

// A LlamaModel uploaded to one backend: its matrices through Compute::upload, its norm
// weights and biases into one device buffer. An upload may cost device memory about the size of its
// matrix, so make one LlamaWeights per model and backend, not per sequence. Keeps the backend
// and its Compute alive, since the uploads hold their code; the model must outlive it (the CPU
// backend reads the file's mapping in place).
class LlamaWeights {
 public:
  LlamaWeights(const LlamaModel& model, std::shared_ptr<Backend> backend);

  const LlamaModel& model() const { return *model_; }
  Backend& backend() const { return *backend_; }
  Compute& compute() const { return *compute_; }
  const std::vector<LlamaLayerWeights>& layers() const { return layers_; }
  const Weights& token_embedding() const { return *token_embd_; }
  const Weights& output() const { return output_ ? *output_ : *token_embd_; }  // tied: one copy
  const Tensor& output_norm() const { return output_norm_; }

 private:
  const LlamaModel* model_;
  std::shared_ptr<Backend> backend_;
  std::shared_ptr<Compute> compute_;  // declared before the uploads, so destroyed after them
  std::shared_ptr<Buffer> vectors_;   // the norm weights and biases
  std::vector<LlamaLayerWeights> layers_;
  std::unique_ptr<Weights> token_embd_;
  std::unique_ptr<Weights> output_;  // null when the model ties it to the token embedding
  Tensor output_norm_;
};

// Where decode steps spent their time, summed over every step a runner has run: the layers'
// matmuls, their decode attention over the KV cache, the output matrix that makes the logits,
// and the rest (embedding, norms, RoPE, the KV append, residual adds): the steps' time less
// the other three.
struct DecodeTimes {
  std::int64_t steps = 0;
  double matmul_s = 0.0;
  double attention_s = 0.0;
  double logits_s = 0.0;
  double other_s = 0.0;

  double total_s() const { return matmul_s + attention_s + logits_s + other_s; }
  DecodeTimes& operator+=(const DecodeTimes& o);
  // `seconds` per step; 0 before the first step.
  double per_step(double seconds) const { return steps > 0 ? seconds / double(steps) : 0.0; }
};

// Runs a LlamaModel on one sequence: tokens go through every layer on the backend's Compute,
// their keys and values into the Session's KvStore, all of it enqueued on the session's stream.
// Holds the activations on the device in blocks of up to `max_block` tokens, so memory stays
// bounded whatever the prompt length. A block's token ids and positions go up; only the logits
// come back.
class LlamaRunner {
 public:
  using Progress = std::function<void(std::int64_t done, std::int64_t total)>;

  LlamaRunner(const LlamaWeights& weights, int max_block);

  // Prefill: runs `tokens` at the session's next positions in blocks of max_block, with
  // causal attention at full precision; reports progress after each block. Writes the logits
  // of the last token into `logits` (n_vocab floats) when it is not empty.
  void prefill(Session& session, std::span<const std::int32_t> tokens, std::span<float> logits,
               const Progress& progress = {});
  // Decode: one token attends to the whole (committed) cache; writes its logits.
  void step(Session& session, std::int32_t token, std::span<float> logits);
  // The time of every step run so far, by part.
  const DecodeTimes& decode_times() const { return decode_times_; }

  // During the following prefill, keeps the queries (after RoPE) of the tokens at positions
  // from `first_position` on, in `layers`: the attention scorer reads what they attend to.
  void capture_queries(std::int64_t first_position, std::vector<int> layers);
  // After that prefill, before the commit: the attention mass those query tokens gave each of
  // the first `n_context` tokens, per query head, for each of `layers` (all captured).
  QueryAttention query_attention(const Session& session, std::int64_t n_context,
                                 std::span<const int> layers) const;

 private:
  void run_block(Session& session, std::span<const std::int32_t> tokens, std::span<float> logits);
  void attention_block(Session& session, int layer, std::int64_t n);
  void ffn_block(const LlamaLayerWeights& layer, std::int64_t n);
  void output_logits(std::int64_t n, std::span<float> logits);
  void keep_captured_queries(int layer, std::int64_t n);
  // Runs work(); during a decode step, records events around it on the stream, so that its
  // time goes to that part of the step's times once the step's work is done.
  template <class Work>
  void timed(double DecodeTimes::*part, Work&& work);
  void add_timed_parts(const Stream& stream, DecodeTimes& step);

  // A timed piece of a decode step: its part and the events around it, made at the first step
  // that needs them and recorded again at every step after.
  struct TimedWork {
    double DecodeTimes::*part = nullptr;
    std::shared_ptr<Event> start, end;
  };

  const LlamaWeights& weights_;
  const LlamaModel& model_;
  Compute& compute_;
  int max_block_;
  std::shared_ptr<Buffer> activations_;
  Tensor ids_, positions_;                                          // i32 [max_block][1]
  Tensor x_, norm_, q_, k_, v_, attn_, gate_, up_, proj_, logits_;  // f32 [rows][width]
  std::vector<std::int32_t> host_positions_;                        // the block's, on their way up
  Stream* stream_ = nullptr;                                        // the session's, during a block
  std::int64_t capture_from_ = 0;
  bool capturing_ = false;  // only prefill captures: decode steps are not the query
  std::vector<int> capture_layers_;
  // Per capture layer: the queries of positions capture_from_ on, [tokens][n_heads · head_dim],
  // on the device, in one buffer allocated by the prefill that captures them.
  std::shared_ptr<Buffer> captured_memory_;
  std::vector<Tensor> captured_;
  DecodeTimes decode_times_;
  // Inside step(): whether to time its parts, and the pieces timed so far (the first
  // timed_count_ of timed_work_).
  bool timing_ = false;
  std::vector<TimedWork> timed_work_;
  std::size_t timed_count_ = 0;
};

}  // namespace cocktail::models
