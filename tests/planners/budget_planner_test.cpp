#include "budget_planner.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "fake_scorer.hpp"
#include "support/error_of.hpp"

namespace cocktail::planners {
namespace {

using ::cocktail::testing::error_of;
using ::cocktail::testing::FakeScorer;
using ::cocktail::testing::make_tokens;
using ::cocktail::testing::plan_with;
using ::cocktail::testing::precisions;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr auto fp16 = Precision::fp16;
constexpr auto int4 = Precision::int4;
constexpr auto int2 = Precision::int2;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Options options(int chunk_size, double target_bits) {
  Options o("planner.budget", {"test.toml", 1});
  o.set("chunk_size", std::int64_t{chunk_size}, {"test.toml", 2});
  o.set("target_bits", target_bits, {"test.toml", 3});
  return o;
}

TEST(PlannerBudget, ThreeBitsUpgradesTheBestHalfFromInt2ToInt4) {
  // 8 chunks of 4 tokens: all INT2 is 64 bit-tokens, the budget 3 · 32 = 96, and each INT4
  // upgrade costs 2 · 4 = 8, so exactly the 4 best chunks move up.
  Options o = options(4, 3.0);
  BudgetPlanner planner(o);
  const Plan plan = plan_with(planner, 32, {0.1, 0.9, 0.3, 0.8, 0.2, 0.7, 0.0, 0.6});
  EXPECT_EQ(precisions(plan), (std::vector{int2, int4, int2, int4, int2, int4, int2, int4}));
  EXPECT_DOUBLE_EQ(plan.average_code_bits(), 3.0);
  EXPECT_DOUBLE_EQ(plan.chunks[1].score, 0.9);
}

TEST(PlannerBudget, Fp16OnlyOnceEveryChunkIsInt4) {
  // All INT4 is 4 bits; 6 bits leaves 2 · 32 = 64 bit-tokens: one FP16 upgrade (12 · 4 = 48).
  Options o = options(4, 6.0);
  BudgetPlanner planner(o);
  const Plan plan = plan_with(planner, 32, {0.1, 0.9, 0.3, 0.8, 0.2, 0.7, 0.0, 0.6});
  EXPECT_EQ(precisions(plan), (std::vector{int4, fp16, int4, int4, int4, int4, int4, int4}));
  EXPECT_DOUBLE_EQ(plan.average_code_bits(), 5.5);
}

TEST(PlannerBudget, RemainderStaysFp16AndCountsAgainstTheBudget) {
  // 34 tokens: 8 chunks of 4 and a 2-token FP16 remainder (32 bit-tokens). Budget 3 · 34 = 102;
  // INT2 chunks 64 + 32 = 96, so no 8-bit upgrade fits.
  Options o = options(4, 3.0);
  BudgetPlanner planner(o);
  const Plan plan = plan_with(planner, 34, std::vector<double>(8, 1.0));
  ASSERT_EQ(plan.chunks.size(), 9u);
  EXPECT_EQ(plan.chunks.back().precision, fp16);
  EXPECT_TRUE(std::isnan(plan.chunks.back().score));
  EXPECT_EQ(plan.tokens_at(int2), 32);
}

TEST(PlannerBudget, NanScoresRankLastAndTiesKeepTokenOrder) {
  Options o = options(4, 3.0);
  BudgetPlanner planner(o);
  const Plan plan = plan_with(planner, 32, {kNaN, 0.5, 0.5, kNaN, 0.5, 0.5, 0.5, 0.2});
  EXPECT_EQ(precisions(plan), (std::vector{int2, int4, int4, int2, int4, int4, int2, int2}));
}

TEST(PlannerBudget, MinimumHighChunksComeFirst) {
  Options o = options(4, 3.5);
  o.set("min_high_chunks", std::int64_t{1}, {"test.toml", 4});
  BudgetPlanner planner(o);
  // Budget 112; the best chunk FP16 (64) + 7 INT2 (56) = 120 > 112: not feasible.
  EXPECT_THAT(error_of<Error>([&] { plan_with(planner, 32, std::vector<double>(8, 0.0)); }),
              AllOf(HasSubstr("target_bits = 3.5"), HasSubstr("1 fp16 chunk(s)"),
                    HasSubstr("3.750 bits per element")));
  Options roomy = options(4, 5.0);
  roomy.set("min_high_chunks", std::int64_t{1}, {"test.toml", 4});
  BudgetPlanner with_room(roomy);
  // Budget 160: 120 spent, then 5 INT4 upgrades of 8.
  const Plan plan = plan_with(with_room, 32, {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7});
  EXPECT_EQ(precisions(plan), (std::vector{int2, int2, int4, int4, int4, int4, int4, fp16}));
}

TEST(PlannerBudget, ByteBudgetCountsScalesAndZeros) {
  Options o("planner.budget", {"test.toml", 1});
  o.set("chunk_size", std::int64_t{4}, {"test.toml", 2});
  o.set("max_kv_bytes", std::int64_t{1024}, {"test.toml", 3});
  BudgetPlanner planner(o);
  const std::vector<std::string> tokens = make_tokens(32);
  FakeScorer scorer({0.1, 0.9, 0.3, 0.8, 0.2, 0.7, 0.0, 0.6});
  PlanInput input{tokens, 32, "q", &scorer};
  input.shape = {1, 1, 32};  // 64 K/V elements per token
  input.layout.group_size = 32;
  // Stored bits: INT2 3, INT4 5. 1024 bytes = 4 bits per element: 96 + 4 upgrades of 8 = 128.
  const Plan plan = planner.plan(input);
  EXPECT_EQ(precisions(plan), (std::vector{int2, int4, int2, int4, int2, int4, int2, int4}));
}

TEST(PlannerBudget, MeetsTheTargetToWithinOneChunk) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (double target : {2.05, 2.5, 3.0, 4.0, 4.2, 9.0, 16.0}) {
    Options o = options(32, target);
    BudgetPlanner planner(o);
    std::vector<double> scores(100);
    for (double& s : scores) s = uniform(rng);
    const Plan plan = plan_with(planner, 3210, scores);
    const double bits = plan.average_code_bits();
    EXPECT_LE(bits, target + 1e-12) << target;
    // The next upgrade (INT2->INT4 costs 2 bits, INT4->FP16 12 bits, on 32 of 3210 tokens)
    // would not have fit.
    const bool all_int4_or_better = plan.tokens_at(int2) == 0;
    const double next_step = (all_int4_or_better ? 12.0 : 2.0) * 32 / 3210;
    if (plan.tokens_at(fp16) < 3210 - 10) {
      EXPECT_GT(bits + next_step, target) << target;
    }
    // Rank order: every upgraded chunk scores at least as high as every chunk below it.
    for (const ChunkPlan& a : plan.chunks) {
      for (const ChunkPlan& b : plan.chunks) {
        if (a.n_tokens == 32 && b.n_tokens == 32 &&
            code_bits(a.precision) > code_bits(b.precision)) {
          EXPECT_GE(a.score, b.score);
        }
      }
    }
  }
}

TEST(PlannerBudget, TiersThatGrowDownwardAreConfigErrors) {
  Options o("planner.budget", {"test.toml", 1});
  o.set("low", std::string("int8"), {"test.toml", 6});
  EXPECT_THAT(error_of<ConfigError>([&] { BudgetPlanner p(o); }),
              AllOf(HasSubstr("test.toml:6"), HasSubstr("low"), HasSubstr("int8")));
  Options negative = options(4, -1.0);
  EXPECT_THAT(error_of<ConfigError>([&] { BudgetPlanner p(negative); }),
              AllOf(HasSubstr("test.toml:3"), HasSubstr("target_bits")));
}

TEST(PlannerBudget, EmptyContextAndNoScorer) {
  Options o;
  BudgetPlanner planner(o);
  EXPECT_TRUE(planner.plan({{}, 0, "q", nullptr}).chunks.empty());
  const std::vector<std::string> tokens = make_tokens(40);
  EXPECT_THAT(error_of<Error>([&] {
                planner.plan({tokens, 40, "q", nullptr});
              }),
              HasSubstr("the budget planner needs a chunk scorer"));
}

}  // namespace
}  // namespace cocktail::planners
