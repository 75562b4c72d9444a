#include "cocktail/plan.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace cocktail {
namespace {

// An unchanged re-plan must be seen as unchanged, or a planner that re-plans every decode step
// (recency) would have the store rewrite every segment at every step.
TEST(Plan, StoresLikeComparesSpansAndPrecisionsNotScores) {
  const Plan unscored = fixed_size_chunks(100, 32, Precision::int4);  // NaN scores
  ASSERT_TRUE(std::isnan(unscored.chunks[0].score));
  EXPECT_TRUE(unscored.stores_like(unscored));
  Plan scored = unscored;
  for (ChunkPlan& c : scored.chunks) c.score = 1.0;
  EXPECT_TRUE(scored.stores_like(unscored));

  Plan lowered = unscored;
  lowered.chunks[1].precision = Precision::int2;
  EXPECT_FALSE(lowered.stores_like(unscored));
  EXPECT_FALSE(fixed_size_chunks(132, 32, Precision::int4).stores_like(unscored));
  EXPECT_FALSE(fixed_size_chunks(100, 16, Precision::int4).stores_like(unscored));
}

}  // namespace
}  // namespace cocktail
