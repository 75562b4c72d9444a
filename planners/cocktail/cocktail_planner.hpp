#pragma once

#include <string_view>

#include "cocktail/chunk_planner.hpp"
#include "cocktail/options.hpp"
#include "cocktail/precision.hpp"

namespace cocktail::planners {

// The paper's planner (Eq. 2-3). The context is cut into chunks of `chunk_size` tokens; every
// full chunk is scored against the query and, with s_min/s_max the extreme scores,
//   T_low  = s_min + (s_max - s_min)·alpha,   T_high = s_max - (s_max - s_min)·beta,
//   s > T_high -> `high`,   s < T_low -> `low`,   otherwise -> `mid`.
// Only the context is planned; a final remainder shorter than a chunk stays FP16, unscored.
// The plan reports alpha, beta and the thresholds it used.
//
// Degenerate cases (the equations taken literally):
//  - empty context: empty plan, thresholds NaN;
//  - context shorter than one chunk: one FP16 remainder chunk, no scorer needed, thresholds NaN;
//  - one full chunk, or all scores equal: s == T_low == T_high, so every chunk is `mid`;
//  - NaN (or infinite) scores: left out of s_min/s_max, their chunks get `mid`, and one warning
//    per plan() is logged; when no score is finite every chunk is `mid` and thresholds are NaN.
// A missing scorer when there is a full chunk, or a scorer returning the wrong number of
// scores, is an Error.
class CocktailPlanner : public ChunkPlanner {
 public:
  // Reads [planner.cocktail]: alpha, beta, chunk_size, high, mid, low.
  explicit CocktailPlanner(Options& opts);

  std::string_view name() const override { return "cocktail"; }
  Plan plan(const PlanInput& input) override;

 private:
  Precision tier(double score, double t_low, double t_high) const;

  double alpha_;
  double beta_;
  int chunk_size_;
  Precision high_;
  Precision mid_;
  Precision low_;
};

}  // namespace cocktail::planners
