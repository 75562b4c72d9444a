#include "cocktail/models/teacher_forcing.hpp"

#include <algorithm>
#include <cmath>

namespace cocktail::models {
namespace {

std::size_t arg_max(std::span<const double> x) {
  return std::size_t(std::max_element(x.begin(), x.end()) - x.begin());
}

// KL(p || q) for log-probabilities.
double kl_divergence(std::span<const double> log_p, std::span<const double> log_q) {
  double kl = 0.0;
  for (std::size_t i = 0; i < log_p.size(); ++i) kl += std::exp(log_p[i]) * (log_p[i] - log_q[i]);
  return std::max(kl, 0.0);
}

}  // namespace

std::vector<double> log_softmax(std::span<const float> logits) {
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float x : logits) sum += std::exp(double(x) - max);
  const double log_sum = max + std::log(sum);
  std::vector<double> out(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) out[i] = double(logits[i]) - log_sum;
  return out;
}

GreedyAnswer greedy_answer(const LlamaModel& model, LlamaRunner& runner, Session& session,
                           std::span<const float> first_logits, std::int64_t max_tokens,
                           bool keep_log_probs) {
  const std::vector<TokenType>& types = model.tokenizer().vocabulary().types;
  std::vector<float> logits(first_logits.begin(), first_logits.end());
  GreedyAnswer answer;
  while (std::int64_t(answer.tokens.size()) < max_tokens) {
    const auto next = TokenId(std::max_element(logits.begin(), logits.end()) - logits.begin());
    if (types[std::size_t(next)] == TokenType::control) break;
    answer.tokens.push_back(next);
    if (std::int64_t(answer.tokens.size()) == max_tokens) break;
    runner.step(session, next, logits);
    if (keep_log_probs) answer.log_probs.push_back(log_softmax(logits));
  }
  return answer;
}

Agreement teacher_force(LlamaRunner& runner, Session& session, const GreedyAnswer& reference) {
  Agreement agreement;
  std::vector<float> logits;
  for (std::size_t i = 0; i < reference.log_probs.size(); ++i) {
    const std::vector<double>& log_p = reference.log_probs[i];
    logits.resize(log_p.size());
    runner.step(session, reference.tokens[i], logits);
    const std::vector<double> log_q = log_softmax(logits);
    agreement.kld_sum += kl_divergence(log_p, log_q);
    agreement.top1_matches += arg_max(log_p) == arg_max(log_q) ? 1 : 0;
    ++agreement.steps;
  }
  return agreement;
}

}  // namespace cocktail::models
