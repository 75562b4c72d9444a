#include "uniform_planner.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "fake_scorer.hpp"

namespace cocktail::planners {
namespace {

using ::cocktail::testing::FakeScorer;
using ::cocktail::testing::make_tokens;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(PlannerUniform, DefaultIsInt4In32TokenChunksWithFp16Remainder) {
  Options o;
  UniformPlanner planner(o);
  const std::vector<std::string> tokens = make_tokens(70);
  FakeScorer scorer({});
  const Plan plan = planner.plan({tokens, 80, "q", &scorer});
  plan.validate();
  EXPECT_EQ(scorer.calls, 0);
  ASSERT_EQ(plan.chunks.size(), 3u);
  EXPECT_EQ(plan.chunks[0].precision, Precision::int4);
  EXPECT_EQ(plan.chunks[1].precision, Precision::int4);
  EXPECT_EQ(plan.chunks[1].first_token, 32);
  EXPECT_EQ(plan.chunks[2].precision, Precision::fp16);
  EXPECT_EQ(plan.chunks[2].n_tokens, 6);
  EXPECT_EQ(plan.n_tokens(), 70);
  for (const ChunkPlan& c : plan.chunks) EXPECT_TRUE(std::isnan(c.score));
  EXPECT_TRUE(std::isnan(plan.alpha));
  EXPECT_TRUE(std::isnan(plan.t_low));
  EXPECT_TRUE(std::isnan(plan.t_high));
}

TEST(PlannerUniform, PrecisionAndChunkSizeAreConfigurable) {
  Options o("planner.uniform", {"test.toml", 1});
  o.set("precision", std::string("nf4"), {"test.toml", 2});
  o.set("chunk_size", std::int64_t{4}, {"test.toml", 3});
  UniformPlanner planner(o);
  const std::vector<std::string> tokens = make_tokens(8);
  const Plan plan = planner.plan({tokens, 8, "q", nullptr});
  ASSERT_EQ(plan.chunks.size(), 2u);
  EXPECT_EQ(plan.tokens_at(Precision::nf4), 8);
}

TEST(PlannerUniform, ChunksHoldingTheNewestTokensStayFp16) {
  Options o("planner.uniform", {"test.toml", 1});
  o.set("precision", std::string("int2"), {"test.toml", 2});
  o.set("chunk_size", std::int64_t{8}, {"test.toml", 3});
  o.set("recent_tokens", std::int64_t{10}, {"test.toml", 4});
  UniformPlanner planner(o);
  const std::vector<std::string> tokens = make_tokens(40);
  // 40 context tokens and 4 query tokens: the window is tokens 34..43, so the chunk [32, 40)
  // holds some of it and [24, 32) none.
  const Plan plan = planner.plan({tokens, 44, "q", nullptr});
  plan.validate();
  ASSERT_EQ(plan.chunks.size(), 5u);
  EXPECT_EQ(plan.tokens_at(Precision::int2), 32);
  EXPECT_EQ(plan.chunks[3].precision, Precision::int2);
  EXPECT_EQ(plan.chunks[4].precision, Precision::fp16);
  // With a query of one token the window is tokens 31..40 and reaches back into [24, 32).
  EXPECT_EQ(planner.plan({tokens, 41, "q", nullptr}).tokens_at(Precision::fp16), 16);
  // A window longer than the sequence keeps everything FP16.
  o.set("recent_tokens", std::int64_t{100}, {"test.toml", 4});
  UniformPlanner wide(o);
  EXPECT_EQ(wide.plan({tokens, 44, "q", nullptr}).tokens_at(Precision::fp16), 40);
}

TEST(PlannerUniform, EmptyContextGivesEmptyPlan) {
  Options o;
  UniformPlanner planner(o);
  EXPECT_TRUE(planner.plan({{}, 3, "q", nullptr}).chunks.empty());
}

TEST(PlannerUniform, BadPrecisionIsAConfigError) {
  Options o("planner.uniform", {"test.toml", 1});
  o.set("precision", std::string("int3"), {"test.toml", 2});
  try {
    UniformPlanner planner(o);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("test.toml:2"), HasSubstr("precision")));
  }
}

}  // namespace
}  // namespace cocktail::planners
