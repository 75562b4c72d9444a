#include "uniform_planner.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace cocktail::planners {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Precision read_precision(Options& opts, const std::string& key, const std::string& fallback) {
  std::vector<std::string> allowed;
  for (Precision p : kAllPrecisions) allowed.emplace_back(to_string(p));
  // get_choice() has already rejected any name parse_precision() would not know.
  return *parse_precision(opts.get_choice(key, fallback, allowed));
}

}  // namespace

UniformPlanner::UniformPlanner(Options& opts)
    : precision_(read_precision(opts, "precision", "int4")),
      chunk_size_(static_cast<int>(opts.get_int("chunk_size", 32, 1, 1048576))) {}

Plan UniformPlanner::plan(const PlanInput& input) {
  Plan plan;
  const auto n_context = static_cast<std::int64_t>(input.token_texts.size());
  for (std::int64_t first = 0; first < n_context; first += chunk_size_) {
    const bool full = first + chunk_size_ <= n_context;
    const int length = full ? chunk_size_ : static_cast<int>(n_context - first);
    plan.chunks.push_back({static_cast<int>(plan.chunks.size()), first, length, kNaN,
                           full ? precision_ : Precision::fp16});
  }
  return plan;
}

}  // namespace cocktail::planners
