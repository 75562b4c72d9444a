#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cocktail/chunk_planner.hpp"
#include "cocktail/chunk_scorer.hpp"

namespace cocktail::testing {

// Returns scores chosen by the test and remembers what it was asked.
class FakeScorer : public ChunkScorer {
 public:
  explicit FakeScorer(std::vector<double> scores) : scores_(std::move(scores)) {}

  std::string_view name() const override { return "fake"; }
  std::vector<double> score(const ScoringInput& input) override {
    ++calls;
    texts.assign(input.chunk_texts.begin(), input.chunk_texts.end());
    spans.assign(input.chunk_tokens.begin(), input.chunk_tokens.end());
    last_query = input.query;
    last_attention = input.query_attention;
    return scores_;
  }

  int calls = 0;
  std::vector<std::string> texts;
  std::vector<TokenSpan> spans;
  std::string last_query;
  const QueryAttention* last_attention = nullptr;

 private:
  std::vector<double> scores_;
};

// n context token pieces: "t0 ", "t1 ", ...
inline std::vector<std::string> make_tokens(int n) {
  std::vector<std::string> tokens;
  for (int i = 0; i < n; ++i) tokens.push_back("t" + std::to_string(i) + " ");
  return tokens;
}

// Plans `n_tokens` context tokens with the given chunk scores, and checks the plan is valid.
template <class Planner>
Plan plan_with(Planner& planner, int n_tokens, std::vector<double> scores) {
  const std::vector<std::string> tokens = make_tokens(n_tokens);
  FakeScorer scorer(std::move(scores));
  Plan plan = planner.plan({tokens, n_tokens, "query", &scorer});
  plan.validate();
  return plan;
}

// Each chunk's precision, in token order.
inline std::vector<Precision> precisions(const Plan& plan) {
  std::vector<Precision> out;
  for (const ChunkPlan& c : plan.chunks) out.push_back(c.precision);
  return out;
}

}  // namespace cocktail::testing
