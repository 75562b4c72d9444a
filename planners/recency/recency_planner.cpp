#include "recency_planner.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <limits>

#include "cocktail/error.hpp"
#include "cocktail/precision.hpp"

namespace cocktail::planners {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t kMaxTokens = std::numeric_limits<int>::max();

}  // namespace

RecencyPlanner::RecencyPlanner(Options& opts)
    : chunk_size_(static_cast<int>(opts.get_int("chunk_size", 32, 1, 1048576))),
      sink_tokens_(static_cast<int>(opts.get_int("sink_tokens", 4, 0, kMaxTokens))),
      recent_tokens_(opts.get_int("recent_tokens", 256, 0, kMaxTokens)),
      int8_tokens_(opts.get_int("int8_tokens", 1024, 0, kMaxTokens)) {}

Plan RecencyPlanner::plan(const PlanInput& input) {
  const std::int64_t n = input.n_tokens;
  if (n < static_cast<std::int64_t>(input.token_texts.size())) {
    throw Error(fmt::format("recency planner: n_tokens ({}) is less than the context's {} tokens",
                            n, input.token_texts.size()));
  }
  Plan plan;
  if (sink_tokens_ > 0 && sink_tokens_ <= n) {
    plan.chunks.push_back({0, 0, sink_tokens_, kNaN, Precision::fp16});
  }
  const std::int64_t planned_end = n - recent_tokens_;
  for (std::int64_t first = sink_tokens_; first + chunk_size_ <= planned_end;
       first += chunk_size_) {
    const std::int64_t age = n - (first + chunk_size_);
    plan.chunks.push_back({static_cast<int>(plan.chunks.size()), first, chunk_size_, kNaN,
                           age < int8_tokens_ ? Precision::int8 : Precision::int4});
  }
  return plan;
}

}  // namespace cocktail::planners
