#include "uniform_planner.hpp"

#include <cstdint>

namespace cocktail::planners {

UniformPlanner::UniformPlanner(Options& opts)
    : precision_(opts.get_precision("precision", Precision::int4)),
      chunk_size_(static_cast<int>(opts.get_int("chunk_size", 32, 1, 1048576))) {}

Plan UniformPlanner::plan(const PlanInput& input) {
  return fixed_size_chunks(static_cast<std::int64_t>(input.token_texts.size()), chunk_size_,
                           precision_);
}

}  // namespace cocktail::planners
