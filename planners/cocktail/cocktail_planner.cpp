#include "cocktail_planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "cocktail/logging.hpp"

namespace cocktail::planners {
namespace {

struct ScoreRange {
  double min = 0.0;
  double max = 0.0;
};

// Extremes of the finite scores; none when no score is finite.
std::optional<ScoreRange> finite_range(const std::vector<double>& scores) {
  std::optional<ScoreRange> range;
  for (double s : scores) {
    if (!std::isfinite(s)) continue;
    if (!range) {
      range = ScoreRange{s, s};
    } else {
      range->min = std::min(range->min, s);
      range->max = std::max(range->max, s);
    }
  }
  return range;
}

}  // namespace

CocktailPlanner::CocktailPlanner(Options& opts)
    : alpha_(opts.get_double("alpha", 0.6, 0.0, 1.0)),
      beta_(opts.get_double("beta", 0.1, 0.0, 1.0)),
      chunk_size_(static_cast<int>(opts.get_int("chunk_size", 32, 1, 1048576))),
      high_(opts.get_precision("high", Precision::fp16)),
      mid_(opts.get_precision("mid", Precision::int4)),
      low_(opts.get_precision("low", Precision::int2)) {
  if (alpha_ + beta_ > 1.0) {
    opts.fail("beta", fmt::format("alpha + beta = {} + {} exceeds 1, which would make T_low > "
                                  "T_high; lower alpha or beta",
                                  alpha_, beta_));
  }
}

Plan CocktailPlanner::plan(const PlanInput& input) {
  Plan plan =
      fixed_size_chunks(static_cast<std::int64_t>(input.token_texts.size()), chunk_size_, mid_);
  const std::size_t n_full = input.token_texts.size() / chunk_size_;
  const std::vector<double> scores =
      score_chunks(input, std::span(plan.chunks).first(n_full), "cocktail");
  plan.alpha = alpha_;
  plan.beta = beta_;
  if (auto range = finite_range(scores)) {
    const double spread = range->max - range->min;
    plan.t_low = range->min + spread * alpha_;
    plan.t_high = range->max - spread * beta_;
  }
  const auto n_bad =
      std::count_if(scores.begin(), scores.end(), [](double s) { return !std::isfinite(s); });
  if (n_bad > 0) {
    log().warn("cocktail planner: {} of {} chunk scores are not finite; those chunks get {}", n_bad,
               scores.size(), to_string(mid_));
  }

  for (std::size_t i = 0; i < n_full; ++i) {
    plan.chunks[i].score = scores[i];
    plan.chunks[i].precision = tier(scores[i], plan.t_low, plan.t_high);
  }
  return plan;
}

// Eq. 3. Comparisons are strict, so a score equal to both thresholds lands in the middle tier.
Precision CocktailPlanner::tier(double score, double t_low, double t_high) const {
  if (!std::isfinite(score)) return mid_;
  if (score > t_high) return high_;
  if (score < t_low) return low_;
  return mid_;
}

}  // namespace cocktail::planners
