#include "uniform_planner.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace cocktail::planners {

UniformPlanner::UniformPlanner(Options& opts)
    : precision_(opts.get_precision("precision", Precision::int4)),
      chunk_size_(static_cast<int>(opts.get_int("chunk_size", 32, 1, 1048576))),
      recent_tokens_(opts.get_int("recent_tokens", 0, 0, std::numeric_limits<int>::max())) {}

Plan UniformPlanner::plan(const PlanInput& input) {
  const auto context = static_cast<std::int64_t>(input.token_texts.size());
  Plan plan = fixed_size_chunks(context, chunk_size_, precision_);
  // The sequence is at least the context, whatever a caller passes as n_tokens.
  const std::int64_t window_start = std::max(input.n_tokens, context) - recent_tokens_;
  for (ChunkPlan& chunk : plan.chunks) {
    if (chunk.first_token + chunk.n_tokens > window_start) chunk.precision = Precision::fp16;
  }
  return plan;
}

}  // namespace cocktail::planners
