#include "recency_planner.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "fake_scorer.hpp"

namespace cocktail::planners {
namespace {

using ::cocktail::testing::make_tokens;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr Precision fp16 = Precision::fp16;
constexpr Precision int8 = Precision::int8;
constexpr Precision int4 = Precision::int4;

// chunk_size 4, sink_tokens 2, recent_tokens 8, int8_tokens 10.
Options small_options() {
  Options o("planner.recency", {"test.toml", 1});
  o.set("chunk_size", std::int64_t{4}, {"test.toml", 2});
  o.set("sink_tokens", std::int64_t{2}, {"test.toml", 3});
  o.set("recent_tokens", std::int64_t{8}, {"test.toml", 4});
  o.set("int8_tokens", std::int64_t{10}, {"test.toml", 5});
  return o;
}

Plan plan_at(RecencyPlanner& planner, std::int64_t n) {
  Plan plan = planner.plan({{}, n, "q", nullptr});
  plan.validate();
  return plan;
}

struct Span {
  std::int64_t first;
  int n_tokens;
  Precision precision;
  friend bool operator==(const Span&, const Span&) = default;
};

std::vector<Span> spans(const Plan& plan) {
  std::vector<Span> out;
  for (const ChunkPlan& c : plan.chunks) out.push_back({c.first_token, c.n_tokens, c.precision});
  return out;
}

TEST(PlannerRecency, ReplansDuringDecode) {
  Options o;
  EXPECT_TRUE(RecencyPlanner(o).replans_during_decode());
}

TEST(PlannerRecency, TiersAtSeveralLengthsByHand) {
  Options o = small_options();
  RecencyPlanner planner(o);
  // Before n reaches the sink there is nothing to plan; then the sink alone.
  EXPECT_TRUE(plan_at(planner, 1).chunks.empty());
  EXPECT_EQ(spans(plan_at(planner, 2)), (std::vector<Span>{{0, 2, fp16}}));
  // [2, 6) needs 6 <= n - 8.
  EXPECT_EQ(spans(plan_at(planner, 13)), (std::vector<Span>{{0, 2, fp16}}));
  EXPECT_EQ(spans(plan_at(planner, 14)), (std::vector<Span>{{0, 2, fp16}, {2, 4, int8}}));
  // Ages: [2, 6) 12 -> INT4; [6, 10) 8 -> INT8.
  EXPECT_EQ(spans(plan_at(planner, 18)),
            (std::vector<Span>{{0, 2, fp16}, {2, 4, int4}, {6, 4, int8}}));
  // n = 30: chunks up to 22; ages 24, 20, 16, 12, 8.
  EXPECT_EQ(
      spans(plan_at(planner, 30)),
      (std::vector<Span>{
          {0, 2, fp16}, {2, 4, int4}, {6, 4, int4}, {10, 4, int4}, {14, 4, int4}, {18, 4, int8}}));
}

TEST(PlannerRecency, AgeEqualToInt8TokensIsInt4) {
  Options o = small_options();
  RecencyPlanner planner(o);
  // n = 16: [2, 6) has age exactly 10.
  EXPECT_EQ(spans(plan_at(planner, 16)), (std::vector<Span>{{0, 2, fp16}, {2, 4, int4}}));
  EXPECT_EQ(spans(plan_at(planner, 15)), (std::vector<Span>{{0, 2, fp16}, {2, 4, int8}}));
}

TEST(PlannerRecency, NoSinkChunkWhenSinkTokensIsZero) {
  Options o = small_options();
  o.set("sink_tokens", std::int64_t{0}, {"test.toml", 3});
  RecencyPlanner planner(o);
  // n = 16: ages 12 and 8.
  EXPECT_EQ(spans(plan_at(planner, 16)), (std::vector<Span>{{0, 4, int4}, {4, 4, int8}}));
}

TEST(PlannerRecency, DefaultsBySink4Chunk32Recent256Int8For1024) {
  Options o;
  RecencyPlanner planner(o);
  // n = 4 + 64 + 256: two chunks, ages 288 and 256.
  EXPECT_EQ(spans(plan_at(planner, 324)),
            (std::vector<Span>{{0, 4, fp16}, {4, 32, int8}, {36, 32, int8}}));
  // n = 2000: chunks end by 1744; a chunk ending at e is INT8 when 2000 - e < 1024.
  const Plan plan = plan_at(planner, 2000);
  for (const ChunkPlan& c : plan.chunks) {
    if (c.index == 0) continue;
    const std::int64_t age = 2000 - (c.first_token + c.n_tokens);
    EXPECT_EQ(c.precision, age < 1024 ? int8 : int4) << c.first_token;
    EXPECT_TRUE(std::isnan(c.score));
  }
  EXPECT_EQ(plan.n_tokens(), 4 + 54 * 32);
}

// Replanning as decoding adds tokens never raises a chunk's precision or moves a chunk.
TEST(PlannerRecency, PrecisionsOnlyGoDownAsTheSequenceGrows) {
  Options o = small_options();
  RecencyPlanner planner(o);
  Plan before = plan_at(planner, 0);
  for (std::int64_t n = 1; n <= 200; ++n) {
    const Plan after = plan_at(planner, n);
    ASSERT_GE(after.chunks.size(), before.chunks.size()) << n;
    for (std::size_t i = 0; i < before.chunks.size(); ++i) {
      EXPECT_EQ(after.chunks[i].first_token, before.chunks[i].first_token) << n;
      EXPECT_EQ(after.chunks[i].n_tokens, before.chunks[i].n_tokens) << n;
      EXPECT_LE(code_bits(after.chunks[i].precision), code_bits(before.chunks[i].precision)) << n;
    }
    EXPECT_LE(after.n_tokens(), std::max<std::int64_t>(2, n - 8)) << n;
    before = after;
  }
}

TEST(PlannerRecency, ContextLongerThanTheSequenceIsAnError) {
  Options o;
  RecencyPlanner planner(o);
  const std::vector<std::string> tokens = make_tokens(10);
  EXPECT_THROW(planner.plan({tokens, 9, "q", nullptr}), Error);
}

TEST(PlannerRecency, NegativeSinkIsAConfigError) {
  Options o = small_options();
  o.set("sink_tokens", std::int64_t{-1}, {"test.toml", 3});
  try {
    RecencyPlanner planner(o);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("test.toml:3"), HasSubstr("sink_tokens")));
  }
}

}  // namespace
}  // namespace cocktail::planners
