#include "budget_planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "cocktail/error.hpp"
#include "cocktail/quant_spec.hpp"

namespace cocktail::planners {
namespace {

// Full-chunk indices, best score first; NaN scores last; ties keep token order.
std::vector<std::size_t> rank_by_score(const std::vector<double>& scores) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const bool a_known = !std::isnan(scores[a]);
    const bool b_known = !std::isnan(scores[b]);
    if (a_known != b_known) return a_known;
    return a_known && scores[a] > scores[b];
  });
  return order;
}

}  // namespace

BudgetPlanner::BudgetPlanner(Options& opts)
    : target_bits_(opts.get_double("target_bits", 3.0, 0.0, 16.0)),
      max_kv_bytes_(opts.get_int("max_kv_bytes", 0, 0, std::int64_t{1} << 50)),
      chunk_size_(static_cast<int>(opts.get_int("chunk_size", 32, 1, 1048576))),
      min_high_chunks_(opts.get_int("min_high_chunks", 0, 0, 1 << 30)),
      high_(opts.get_precision("high", Precision::fp16)),
      mid_(opts.get_precision("mid", Precision::int4)),
      low_(opts.get_precision("low", Precision::int2)) {
  if (code_bits(mid_) > code_bits(high_)) {
    opts.fail("mid", fmt::format("mid = {} has more bits than high = {}; the tiers must not grow "
                                 "from high to low",
                                 to_string(mid_), to_string(high_)));
  }
  if (code_bits(low_) > code_bits(mid_)) {
    opts.fail("low", fmt::format("low = {} has more bits than mid = {}; the tiers must not grow "
                                 "from high to low",
                                 to_string(low_), to_string(mid_)));
  }
}

double BudgetPlanner::cost_bits(Precision p, const PlanInput& input) const {
  return max_kv_bytes_ > 0 ? stored_bits(p, input.layout.group_size) : code_bits(p);
}

double BudgetPlanner::budget_bits(const PlanInput& input) const {
  if (max_kv_bytes_ == 0) return target_bits_;
  // K and V of every layer and KV head: elements per token.
  const double elements = 2.0 * input.shape.n_layers * double(input.shape.token_floats());
  return double(max_kv_bytes_) * 8.0 / (elements * double(input.token_texts.size()));
}

Plan BudgetPlanner::plan(const PlanInput& input) {
  const auto n_context = static_cast<std::int64_t>(input.token_texts.size());
  Plan plan = fixed_size_chunks(n_context, chunk_size_, low_);
  if (n_context == 0) return plan;
  const auto n_full = static_cast<std::size_t>(n_context / chunk_size_);
  const std::span<ChunkPlan> full = std::span(plan.chunks).first(n_full);
  const std::vector<double> scores = score_chunks(input, full, "budget");
  for (std::size_t i = 0; i < n_full; ++i) full[i].score = scores[i];

  const std::vector<std::size_t> ranked = rank_by_score(scores);
  for (std::size_t r = 0; r < ranked.size() && std::int64_t(r) < min_high_chunks_; ++r) {
    full[ranked[r]].precision = high_;
  }

  // Everything in element bits summed over tokens, compared with a relative slack so a target
  // met exactly is not lost to rounding.
  double spent = 0.0;
  for (const ChunkPlan& c : plan.chunks) spent += c.n_tokens * cost_bits(c.precision, input);
  const double budget = budget_bits(input) * double(n_context);
  const double slack = 1e-9 * budget;
  if (spent > budget + slack) {
    throw Error(fmt::format(
        "budget planner: the budget ({}) cannot be met: with {} {} chunk(s) and every other full "
        "chunk at {}, the {} context tokens need {:.3f} bits per element",
        max_kv_bytes_ > 0 ? fmt::format("max_kv_bytes = {}", max_kv_bytes_)
                          : fmt::format("target_bits = {}", target_bits_),
        std::min<std::int64_t>(min_high_chunks_, std::int64_t(n_full)), to_string(high_),
        to_string(low_), n_context, spent / double(n_context)));
  }

  for (const auto& [from, to] : {std::pair{low_, mid_}, std::pair{mid_, high_}}) {
    const double step = cost_bits(to, input) - cost_bits(from, input);
    for (std::size_t index : ranked) {
      ChunkPlan& chunk = full[index];
      if (chunk.precision != from) continue;
      if (spent + chunk.n_tokens * step > budget + slack) return plan;
      chunk.precision = to;
      spent += chunk.n_tokens * step;
    }
  }
  return plan;
}

}  // namespace cocktail::planners
