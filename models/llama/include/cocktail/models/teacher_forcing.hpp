#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cocktail/models/llama_model.hpp"
#include "cocktail/session.hpp"

namespace cocktail::models {

// How a cache's answers are compared with a reference's (`cocktail eval` against the FP16
// cache, the backends' tests against the CPU's): the reference answers greedily, then its tokens
// are fed through the other cache (teacher forcing), so that every step compares the two
// next-token distributions after the same history, whatever either would have said on its own.

// The log-probabilities of one step's logits.
std::vector<double> log_softmax(std::span<const float> logits);

struct GreedyAnswer {
  std::vector<TokenId> tokens;
  // With kept log-probabilities, those of the step after each token that was fed back: every
  // token but the last, or every token when the answer ended at the end of the model's turn.
  std::vector<std::vector<double>> log_probs;
};

// Greedy decoding on a prefilled (and committed) session, from the logits of the prompt's last
// token, until the end of the model's turn (a control token, left out) or max_tokens.
GreedyAnswer greedy_answer(const LlamaModel& model, LlamaRunner& runner, Session& session,
                           std::span<const float> first_logits, std::int64_t max_tokens,
                           bool keep_log_probs);

struct Agreement {
  std::int64_t steps = 0;
  std::int64_t top1_matches = 0;  // steps whose most likely token is the reference's
  double kld_sum = 0.0;           // KL(reference || this cache), summed over the steps

  double top1() const { return steps > 0 ? double(top1_matches) / double(steps) : 0.0; }
  double mean_kld() const { return steps > 0 ? kld_sum / double(steps) : 0.0; }
};

// Teacher forcing: feeds the reference answer's tokens through `session` (prefilled with the
// same prompt), one decode step for each of its kept log-probabilities, and compares each
// step's next-token distribution with the reference's.
Agreement teacher_force(LlamaRunner& runner, Session& session, const GreedyAnswer& reference);

}  // namespace cocktail::models
