#pragma once

#include <cstdint>
#include <string_view>

#include "cocktail/chunk_planner.hpp"
#include "cocktail/options.hpp"

namespace cocktail::planners {

// A query-blind baseline over the whole sequence (context, query and generated tokens), with
// n = PlanInput::n_tokens:
//  - the first `sink_tokens` tokens are one FP16 chunk (left out when 0, or until n reaches it);
//  - then chunks of `chunk_size` from token `sink_tokens`; chunk [a, a+C) is planned only once
//    a + C <= n - recent_tokens, so the newest tokens stay in the FP16 tail;
//  - a planned chunk's age is n - (a + C): INT8 while age < int8_tokens, INT4 after.
// A chunk keeps its extent once planned and its age only grows with n, so replanning during
// decode only lowers precisions. Never scores (scores and thresholds are NaN).
class RecencyPlanner : public ChunkPlanner {
 public:
  // Reads [planner.recency]: chunk_size, sink_tokens, recent_tokens, int8_tokens.
  explicit RecencyPlanner(Options& opts);

  std::string_view name() const override { return "recency"; }
  Plan plan(const PlanInput& input) override;
  bool replans_during_decode() const override { return true; }

 private:
  int chunk_size_;
  int sink_tokens_;
  std::int64_t recent_tokens_;
  std::int64_t int8_tokens_;
};

}  // namespace cocktail::planners
