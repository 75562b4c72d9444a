#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cocktail/config.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/eval/eval_case.hpp"
#include "cocktail/eval/results.hpp"
#include "cocktail/models/llama_model.hpp"
#include "cocktail/models/model_settings.hpp"
#include "cocktail/models/question_answering.hpp"
#include "cocktail/models/teacher_forcing.hpp"
#include "cocktail/operating_point.hpp"
#include "eval_methods.hpp"

namespace cocktail::cli {

// What one method did on one case, beyond the shared CaseResult metrics.
struct MethodCaseOutcome {
  eval::CaseResult result;  // contains, f1, kld, top1
  std::string answer;
  OperatingPoint cache;                // precision shares, code bits, the store's bytes
  double plan_s = 0.0;                 // scoring (attention read included) + planning + commit
  std::optional<bool> needle_in_top5;  // a needle's chunk ranked in the top 5% of scores
};

struct CaseRun {
  double prefill_s = 0.0;
  std::vector<MethodCaseOutcome> methods;  // in the order of the runner's methods
};

// Runs evaluation cases with one model for several methods. Each case is prefilled once at
// full precision; every method then plans and commits its own copy of that cache. Fidelity is
// measured by teacher forcing the FP16 cache's greedy answer through each method's cache
// (mean KL divergence of the next-token distributions and top-1 agreement, over the answer
// positions after the first: the first answer token comes from the full-precision prefill, so
// it is the same for every method); the score by each method's own greedy answer.
class EvalRunner {
 public:
  using Progress = std::function<void(std::int64_t done, std::int64_t total)>;

  // Each method's engine comes from the config file (the defaults when empty) with `overrides`
  // and then the method's own overrides applied.
  EvalRunner(const std::vector<EvalMethod>& methods, const std::string& config_file,
             const std::vector<std::string>& overrides, const models::LlamaModel& model,
             const models::ModelSettings& settings, int max_new_tokens);

  const std::vector<EvalMethod>& methods() const { return methods_; }
  // Prompt tokens of a context (for fitting generated cases to a length).
  std::int64_t count_tokens(std::string_view text) const;
  CaseRun run(const eval::EvalCase& c, const Progress& prefill_progress = {}) const;

 private:
  models::GreedyAnswer fp16_reference(const Session& prefilled, std::span<const std::string> texts,
                                      const eval::EvalCase& c, std::span<const float> first_logits,
                                      models::LlamaRunner& runner) const;
  MethodCaseOutcome run_method(const Engine& engine, const Session& prefilled,
                               const models::QuestionPrompt& prompt,
                               std::span<const std::string> texts, const eval::EvalCase& c,
                               const models::GreedyAnswer& reference,
                               std::span<const float> first_logits,
                               models::LlamaRunner& runner) const;

  std::vector<EvalMethod> methods_;
  std::vector<std::unique_ptr<Engine>> engines_;  // one per method
  std::unique_ptr<Engine> fp16_engine_;           // the reference
  const models::LlamaModel& model_;
  models::ModelSettings settings_;
  std::unique_ptr<models::LlamaWeights> weights_;
  int max_new_tokens_;
};

}  // namespace cocktail::cli
