#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "cocktail/compute.hpp"
#include "cocktail/models/bpe_tokenizer.hpp"
#include "cocktail/models/chat_template.hpp"
#include "cocktail/models/gguf_file.hpp"
#include "cocktail/models/llama_hparams.hpp"
#include "cocktail/session.hpp"

namespace cocktail::models {

// One transformer block's weights: views into the model file, except the norm weights.
struct LlamaLayer {
  std::vector<float> attn_norm;
  std::vector<float> ffn_norm;
  WeightView q, k, v, output;
  WeightView gate, up, down;
};

// A Llama-family decoder (RMSNorm, RoPE, GQA, SwiGLU, tied or separate output matrix) over a
// GGUF file. The weights stay quantized in the file's mapping; matmuls dequantize on the fly.
// Opening checks every tensor's presence, type and shape, naming the first that is wrong, and
// loads the tokenizer and chat template the file carries.
class LlamaModel {
 public:
  explicit LlamaModel(const std::filesystem::path& path);

  const GgufFile& file() const { return file_; }
  const LlamaHyperparameters& hparams() const { return hparams_; }
  const std::vector<LlamaLayer>& layers() const { return layers_; }
  const WeightView& token_embedding() const { return token_embd_; }
  const WeightView& output() const { return output_; }
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

// A LlamaModel's matrices as one Compute reads them: the layers and the output matrix, each
// view carrying the copy Compute::prepare made of it where the backend makes one. A copy costs
// memory about the size of its matrix, so make one LlamaWeights per model and Compute, not per
// sequence. Keeps the Compute alive, since the copies hold its code; the model must outlive it.
class LlamaWeights {
 public:
  LlamaWeights(const LlamaModel& model, std::shared_ptr<Compute> compute);

  const LlamaModel& model() const { return *model_; }
  Compute& compute() const { return *compute_; }
  const std::vector<LlamaLayer>& layers() const { return layers_; }
  const WeightView& output() const { return output_; }

 private:
  WeightView prepared(const WeightView& w);

  const LlamaModel* model_;
  std::shared_ptr<Compute> compute_;  // declared before the copies, so destroyed after them
  std::vector<std::unique_ptr<PreparedWeights>> copies_;
  std::vector<LlamaLayer> layers_;
  WeightView output_;
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
// their keys and values into the Session's KvStore. Holds the activation buffers for blocks
// of up to `max_block` tokens, so memory stays bounded whatever the prompt length.
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
  void ffn_block(const LlamaLayer& layer, std::int64_t n);
  void output_logits(std::int64_t n, std::span<float> logits);
  void keep_captured_queries(int layer, std::int64_t n);
  // Runs work(), adding its time to that part of step_times_ during a decode step.
  template <class Work>
  void timed(double DecodeTimes::*part, Work&& work);

  const LlamaWeights& weights_;
  const LlamaModel& model_;
  Compute& compute_;
  int max_block_;
  std::vector<std::int32_t> positions_;
  std::vector<float> x_, norm_, q_, k_, v_, attn_, gate_, up_, proj_;
  std::int64_t capture_from_ = 0;
  bool capturing_ = false;  // only prefill captures: decode steps are not the query
  std::vector<int> capture_layers_;
  std::vector<std::vector<float>> captured_;  // per capture layer: [tokens][n_heads][head_dim]
  DecodeTimes decode_times_;
  // Inside step(): that step's times, added to decode_times_ once it succeeds.
  DecodeTimes* step_times_ = nullptr;
};

}  // namespace cocktail::models
