#include "eval_runner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "cocktail/eval/metrics.hpp"
#include "cocktail/models/question_answering.hpp"
#include "cocktail/models/teacher_forcing.hpp"
#include "cocktail/stopwatch.hpp"

namespace cocktail::cli {
namespace {

Config method_config(const std::string& file, std::vector<std::string> overrides,
                     const std::vector<std::string>& method_overrides) {
  overrides.insert(overrides.end(), method_overrides.begin(), method_overrides.end());
  return file.empty() ? parse_config("", "<defaults>", overrides) : load_config(file, overrides);
}

// Token index of each needle's first byte, given where the context starts among the planned
// tokens and their pieces.
std::vector<std::int64_t> needle_tokens(const eval::EvalCase& c, std::span<const std::string> texts,
                                        std::int64_t header_tokens) {
  std::vector<std::int64_t> tokens;
  for (const eval::CharRange& needle : c.needles) {
    std::size_t offset = 0;
    for (std::int64_t t = header_tokens; t < std::int64_t(texts.size()); ++t) {
      offset += texts[std::size_t(t)].size();
      if (offset > needle.begin) {
        tokens.push_back(t);
        break;
      }
    }
  }
  return tokens;
}

// Whether the chunk holding some needle ranks in the top 5% of the plan's finite scores. A
// needle in an unscored chunk (the FP16 remainder at the end of the context, which no planner
// scores) does not count either way; with no scored needle there is no answer.
std::optional<bool> needle_in_top5(const Plan& plan, const std::vector<std::int64_t>& needles) {
  std::vector<double> scores;
  for (const ChunkPlan& chunk : plan.chunks) {
    if (std::isfinite(chunk.score)) scores.push_back(chunk.score);
  }
  if (scores.empty()) return std::nullopt;
  std::sort(scores.begin(), scores.end(), std::greater<>());
  const double cut = scores[std::size_t(std::ceil(0.05 * double(scores.size()))) - 1];
  std::optional<bool> found;
  for (std::int64_t token : needles) {
    for (const ChunkPlan& chunk : plan.chunks) {
      const bool holds = token >= chunk.first_token && token < chunk.first_token + chunk.n_tokens;
      if (!holds || !std::isfinite(chunk.score)) continue;
      found = found.value_or(false) || chunk.score >= cut;
    }
  }
  return found;
}

}  // namespace

EvalRunner::EvalRunner(const std::vector<EvalMethod>& methods, const std::string& config_file,
                       const std::vector<std::string>& overrides, const models::LlamaModel& model,
                       const models::ModelSettings& settings, int max_new_tokens)
    : methods_(methods), model_(model), settings_(settings), max_new_tokens_(max_new_tokens) {
  for (const EvalMethod& m : methods_) {
    engines_.push_back(
        std::make_unique<Engine>(method_config(config_file, overrides, m.overrides)));
  }
  fp16_engine_ = std::make_unique<Engine>(
      method_config(config_file, overrides, parse_eval_methods("fp16").front().overrides));
  weights_ = std::make_unique<models::LlamaWeights>(model_, fp16_engine_->backend());
}

std::int64_t EvalRunner::count_tokens(std::string_view text) const {
  return std::int64_t(model_.tokenizer().encode(text, false).size());
}

models::GreedyAnswer EvalRunner::fp16_reference(const Session& prefilled,
                                                std::span<const std::string> texts,
                                                const eval::EvalCase& c,
                                                std::span<const float> first_logits,
                                                models::LlamaRunner& runner) const {
  Session session = fp16_engine_->session_from(prefilled);
  session.plan_and_commit(texts, c.question);
  return models::greedy_answer(model_, runner, session, first_logits, max_new_tokens_, true);
}

MethodCaseOutcome EvalRunner::run_method(const Engine& engine, const Session& prefilled,
                                         const models::QuestionPrompt& prompt,
                                         std::span<const std::string> texts,
                                         const eval::EvalCase& c,
                                         const models::GreedyAnswer& reference,
                                         std::span<const float> first_logits,
                                         models::LlamaRunner& runner) const {
  const models::LlamaHyperparameters& h = model_.hparams();
  const auto n_planned = std::int64_t(prompt.planned.size());
  MethodCaseOutcome out;
  Session session = engine.session_from(prefilled);

  const Stopwatch planning;
  const std::vector<int> layers = engine.scorer().query_attention_layers(h.n_layers);
  const QueryAttention attention =
      layers.empty() ? QueryAttention{} : runner.query_attention(prefilled, n_planned, layers);
  const Plan plan =
      session.plan_and_commit(texts, c.question, layers.empty() ? nullptr : &attention);
  out.plan_s = planning.seconds();
  const KvStore& store = session.store();
  out.cache =
      operating_point(plan, n_planned, store.bytes(), h.kv_shape().fp16_bytes(store.n_tokens()));
  out.needle_in_top5 = needle_in_top5(plan, needle_tokens(c, texts, prompt.header_tokens));

  Session own = session.fork();
  const models::GreedyAnswer answer =
      models::greedy_answer(model_, runner, own, first_logits, max_new_tokens_, false);
  out.answer = model_.tokenizer().decode(answer.tokens, false);
  out.result = eval::case_result(c, eval::score_answer(c, out.answer));

  // Teacher forcing: the FP16 answer through this method's cache.
  if (!reference.log_probs.empty()) {
    const models::Agreement agreement = models::teacher_force(runner, session, reference);
    out.result.kld = agreement.mean_kld();
    out.result.top1 = agreement.top1();
  }
  return out;
}

CaseRun EvalRunner::run(const eval::EvalCase& c, const Progress& prefill_progress) const {
  const models::LlamaHyperparameters& h = model_.hparams();
  models::Question question;
  question.context = c.context;
  question.question = c.question;
  question.max_new_tokens = max_new_tokens_;
  const models::QuestionPrompt prompt = models::build_prompt(model_, question);
  std::vector<std::int32_t> all = prompt.planned;
  all.insert(all.end(), prompt.rest.begin(), prompt.rest.end());
  const auto n_planned = std::int64_t(prompt.planned.size());

  // One prefill for every method, capturing the queries every attention scorer reads.
  std::set<int> layers;
  for (const auto& engine : engines_) {
    for (int l : engine->scorer().query_attention_layers(h.n_layers)) layers.insert(l);
  }
  models::LlamaRunner runner(*weights_, settings_.prefill_block);
  if (!layers.empty()) runner.capture_queries(n_planned, {layers.begin(), layers.end()});
  Session prefilled =
      fp16_engine_->new_session(h.kv_shape(), std::int64_t(all.size()) + max_new_tokens_ + 1);
  std::vector<float> first_logits(std::size_t(h.n_vocab));
  const Stopwatch prefilling;
  runner.prefill(prefilled, all, first_logits, prefill_progress);

  CaseRun run;
  run.prefill_s = prefilling.seconds();
  std::vector<std::string> texts;
  texts.reserve(prompt.planned.size());
  for (std::int32_t id : prompt.planned) {
    texts.emplace_back(model_.tokenizer().token_piece(id, true));
  }
  const models::GreedyAnswer reference = fp16_reference(prefilled, texts, c, first_logits, runner);
  for (const auto& engine : engines_) {
    run.methods.push_back(
        run_method(*engine, prefilled, prompt, texts, c, reference, first_logits, runner));
  }
  return run;
}

}  // namespace cocktail::cli
