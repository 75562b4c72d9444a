#pragma once

#include <string_view>

#include "cocktail/chunk_planner.hpp"
#include "cocktail/options.hpp"
#include "cocktail/precision.hpp"

namespace cocktail::planners {

// The baseline: every full chunk of the context at one precision, a final remainder shorter
// than a chunk at FP16. Never scores (scores and thresholds are NaN); an empty context gives an
// empty plan.
class UniformPlanner : public ChunkPlanner {
 public:
  // Reads [planner.uniform]: precision, chunk_size.
  explicit UniformPlanner(Options& opts);

  std::string_view name() const override { return "uniform"; }
  Plan plan(const PlanInput& input) override;

 private:
  Precision precision_;
  int chunk_size_;
};

}  // namespace cocktail::planners
