#pragma once

#include <cstdint>
#include <string_view>

#include "cocktail/chunk_planner.hpp"
#include "cocktail/options.hpp"
#include "cocktail/precision.hpp"

namespace cocktail::planners {

// The baseline: every full chunk of the context at one precision, a final remainder shorter
// than a chunk at FP16. With `recent_tokens` above 0, a chunk that holds any of the sequence's
// newest `recent_tokens` tokens (n = PlanInput::n_tokens, the query's tokens included) stays
// FP16 too: KIVI's full-precision residual window, planned as FP16 chunks so that the plan's
// shares and code bits count it. Never scores (scores and thresholds are NaN); an empty context
// gives an empty plan.
class UniformPlanner : public ChunkPlanner {
 public:
  // Reads [planner.uniform]: precision, chunk_size, recent_tokens.
  explicit UniformPlanner(Options& opts);

  std::string_view name() const override { return "uniform"; }
  Plan plan(const PlanInput& input) override;

 private:
  Precision precision_;
  int chunk_size_;
  std::int64_t recent_tokens_;
};

}  // namespace cocktail::planners
