#pragma once

#include <cstdint>
#include <string_view>

#include "cocktail/chunk_planner.hpp"
#include "cocktail/options.hpp"
#include "cocktail/precision.hpp"

namespace cocktail::planners {

// Plans to a memory budget instead of score thresholds: users think in memory, not in alpha and
// beta. The context is cut into chunks of `chunk_size` tokens (a final remainder stays FP16, as
// in every planner) and the full chunks are ranked by score, best first (NaN scores last, ties
// in token order). The top `min_high_chunks` get `high`; every other chunk starts at `low`; then,
// in rank order, chunks move up one tier (`low` to `mid`, and once all are `mid`, `mid` to
// `high`) while the plan stays within the budget. So the plan meets the budget to within one
// chunk's upgrade, and a low tier is left before any chunk climbs above mid: the first bits
// buy the most accuracy where the quantization error is largest.
//
// The budget is either
//  - `target_bits`: mean code bits per element over the context (what Plan::average_code_bits
//    reports; scales and zeros not counted), or
//  - `max_kv_bytes` (when above 0): the bytes of the context's K/V in the store, scales and
//    zeros counted (quant_spec.hpp's stored_bits), from the cache shape the host passes.
// A budget that even the lowest plan exceeds is an Error saying what the lowest plan needs.
class BudgetPlanner : public ChunkPlanner {
 public:
  // Reads [planner.budget]: target_bits, max_kv_bytes, chunk_size, min_high_chunks, high, mid,
  // low.
  explicit BudgetPlanner(Options& opts);

  std::string_view name() const override { return "budget"; }
  Plan plan(const PlanInput& input) override;

 private:
  // Bits an element of precision p costs against the budget.
  double cost_bits(Precision p, const PlanInput& input) const;
  // The budget in element bits per token: target_bits, or max_kv_bytes spread over the tokens.
  double budget_bits(const PlanInput& input) const;

  double target_bits_;
  std::int64_t max_kv_bytes_;
  int chunk_size_;
  std::int64_t min_high_chunks_;
  Precision high_;
  Precision mid_;
  Precision low_;
};

}  // namespace cocktail::planners
