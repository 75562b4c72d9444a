#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/engine.hpp"
#include "cocktail/models/llama_model.hpp"
#include "cocktail/models/model_settings.hpp"
#include "cocktail/models/teacher_forcing.hpp"
#include "cocktail/models/token_sampler.hpp"
#include "cocktail/models/utf8_stream.hpp"
#include "cocktail/operating_point.hpp"
#include "cocktail/session.hpp"

namespace cocktail::models {

// One long-context question: the context (a document) and a question about it, asked as one
// user turn of the model's chat template: context, a blank line, the question.
struct Question {
  std::string context;
  std::string question;
  int max_new_tokens = 64;
  // A prompt longer than the model's context length is an error unless this is set; then the
  // end of the context is cut so the prompt and the answer fit.
  bool truncate_context = false;
  // When above 0, the context is cut to at most this many tokens (benchmarks at set lengths).
  std::int64_t context_token_limit = 0;
  // Benchmarks generate exactly max_new_tokens; answers stop at the end of the model's turn.
  bool stop_at_end_of_turn = true;
};

struct AnswerStats {
  std::int64_t prompt_tokens = 0;   // every token prefilled
  std::int64_t context_tokens = 0;  // tokens the plan covers: the chat header and the context
  std::int64_t generated_tokens = 0;
  bool context_truncated = false;
  OperatingPoint cache;  // the plan's precision shares and the committed store's bytes
  double prefill_s = 0.0;
  double plan_s = 0.0;  // scoring + planning + reorder and quantization
  DecodeTimes decode;   // the steps of the generated tokens after the first, by part
  std::size_t peak_rss_bytes = 0;

  // Mean time per generated token after the first.
  double tpot_s() const { return decode.per_step(decode.total_s()); }
};

struct Answer {
  std::string text;
  std::vector<TokenId> tokens;
  Plan plan;
  AnswerStats stats;
};

// A question's prompt in the model's chat template, in two parts: `planned` is the chat header
// and the context (what the plan covers); `rest` is the question and the assistant's opening,
// which stay in the FP16 tail like generated tokens.
struct QuestionPrompt {
  std::vector<TokenId> planned;
  std::vector<TokenId> rest;
  std::int64_t header_tokens = 0;  // the chat header at the start of `planned`
  bool truncated = false;

  std::int64_t tokens() const { return std::int64_t(planned.size() + rest.size()); }
};

// Tokenizes a question with the model's chat template. Throws Error for an empty question, a
// max_new_tokens below 1 or beyond the model's context length, or a prompt that does not fit
// (see Question::truncate_context).
QuestionPrompt build_prompt(const LlamaModel& model, const Question& question);

class QuestionAnswerer;

// What QuestionAnswerer passes on while it works.
struct AnswerCallbacks {
  std::function<void(std::int64_t done, std::int64_t total)> prefill_progress;
  std::function<void(std::string_view text)> on_text;  // answer text as it is generated
};

// A question being answered one token at a time (QuestionAnswerer::start): the prompt is
// prefilled and the plan committed when it is made, and each next_token() decodes one more
// token of the answer. Several can run side by side, each with its own cache; each refers to
// the QuestionAnswerer that made it, which must outlive it.
class AnswerInProgress {
 public:
  // Adds the answer's next token (its text goes to on_text); false, adding nothing, once the
  // answer is complete: max_new_tokens tokens, or the end of the model's turn when the question
  // stops there.
  bool next_token();
  bool done() const { return done_; }
  // The answer and its stats; the in-progress answer is spent.
  Answer finish() &&;

  // Instead of next_token(), on the cache as start() committed it (teacher_forcing.hpp): the
  // greedy answer with its next-token log-probabilities, to compare another cache with; or such
  // a reference answer's tokens fed through this cache. Either spends the answer in progress.
  GreedyAnswer reference_answer() &&;
  Agreement teacher_force(const GreedyAnswer& reference) &&;
  const Plan& plan() const { return answer_.plan; }

 private:
  friend class QuestionAnswerer;
  AnswerInProgress(const QuestionAnswerer& answerer, const Question& question,
                   AnswerCallbacks callbacks, const QuestionPrompt& prompt);

  const QuestionAnswerer& answerer_;
  int max_new_tokens_;
  bool stop_at_end_of_turn_;
  AnswerCallbacks callbacks_;
  Session session_;
  LlamaRunner runner_;
  std::vector<float> logits_;  // of the last token fed to the model
  TokenSampler sampler_;
  Utf8Stream text_;
  Answer answer_;
  bool done_ = false;
};

// Answers questions about long contexts with a Llama model on the engine's backend: prefill at
// full precision, then the engine's planner and scorer plan the context and the store commits
// the plan (reorder + quantize), then decoding runs on the mixed cache and its FP16 tail.
class QuestionAnswerer {
 public:
  using Callbacks = AnswerCallbacks;

  QuestionAnswerer(const Engine& engine, const LlamaModel& model, const ModelSettings& settings);
  // Shares another answerer's weights (for example to compare cache configurations on one copy
  // of them). Throws Error when they were made for another backend than the engine's.
  QuestionAnswerer(const Engine& engine, std::shared_ptr<const LlamaWeights> weights,
                   const ModelSettings& settings);

  const std::shared_ptr<const LlamaWeights>& weights() const { return weights_; }

  // The whole answer. Throws Error as build_prompt() does.
  Answer answer(const Question& question, const Callbacks& callbacks = {}) const;

  // Prefills the prompt and commits the plan; the caller decodes the answer token by token.
  // Throws Error as build_prompt() does.
  AnswerInProgress start(const Question& question, Callbacks callbacks = {}) const;

 private:
  friend class AnswerInProgress;
  const LlamaModel& model() const { return weights_->model(); }

  const Engine& engine_;
  std::shared_ptr<const LlamaWeights> weights_;
  ModelSettings settings_;
};

}  // namespace cocktail::models
