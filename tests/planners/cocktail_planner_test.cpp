#include "cocktail_planner.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "cocktail/logging.hpp"
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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr Precision fp16 = Precision::fp16;
constexpr Precision int8 = Precision::int8;
constexpr Precision nf4 = Precision::nf4;
constexpr Precision int4 = Precision::int4;
constexpr Precision int2 = Precision::int2;

Options options(int chunk_size, double alpha, double beta) {
  Options o("planner.cocktail", {"test.toml", 1});
  o.set("chunk_size", std::int64_t{chunk_size}, {"test.toml", 2});
  o.set("alpha", alpha, {"test.toml", 3});
  o.set("beta", beta, {"test.toml", 4});
  return o;
}

std::string config_error(Options o) {
  try {
    CocktailPlanner planner(o);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no ConfigError";
}

// Six chunks, alpha 0.6, beta 0.1: s_min 0, s_max 10, so T_low = 6 and T_high = 9.
TEST(PlannerCocktail, DefaultAlphaBetaSixChunksByHand) {
  Options o = options(2, 0.6, 0.1);
  CocktailPlanner planner(o);
  const Plan plan = plan_with(planner, 12, {6.1, 0.0, 10.0, 5.9, 9.1, 8.9});
  EXPECT_EQ(plan.alpha, 0.6);
  EXPECT_EQ(plan.beta, 0.1);
  EXPECT_DOUBLE_EQ(plan.t_low, 6.0);
  EXPECT_DOUBLE_EQ(plan.t_high, 9.0);
  EXPECT_EQ(precisions(plan), (std::vector{int4, int2, fp16, int2, fp16, int4}));
}

// alpha 0.25, beta 0.5 over s in [-3, 5]: T_low = -3 + 8/4 = -1, T_high = 5 - 8/2 = 1 (exact in
// binary). Scores equal to a threshold are neither above T_high nor below T_low: middle tier.
TEST(PlannerCocktail, OtherAlphaBetaSixChunksByHand) {
  Options o = options(3, 0.25, 0.5);
  CocktailPlanner planner(o);
  const Plan plan = plan_with(planner, 18, {5.0, -1.0, 1.0, -1.5, 1.5, -3.0});
  EXPECT_EQ(plan.t_low, -1.0);
  EXPECT_EQ(plan.t_high, 1.0);
  EXPECT_EQ(precisions(plan), (std::vector{fp16, int4, int4, int2, fp16, int2}));
}

TEST(PlannerCocktail, ChunksCarryIndexTokensAndScores) {
  Options o = options(2, 0.6, 0.1);
  CocktailPlanner planner(o);
  const Plan plan = plan_with(planner, 6, {1.0, 3.0, 2.5});
  ASSERT_EQ(plan.chunks.size(), 3u);
  EXPECT_EQ(plan.chunks[1], (ChunkPlan{1, 2, 2, 3.0, fp16}));
  EXPECT_EQ(plan.chunks[2], (ChunkPlan{2, 4, 2, 2.5, int4}));
  EXPECT_EQ(plan.n_tokens(), 6);
}

TEST(PlannerCocktail, ScorerSeesConcatenatedChunkTextsAndQuery) {
  Options o = options(2, 0.6, 0.1);
  CocktailPlanner planner(o);
  const std::vector<std::string> tokens = make_tokens(5);
  FakeScorer scorer({0.0, 1.0});
  const QueryAttention attention{{3}, 1, 5, std::vector<float>(5, 0.2f)};
  planner.plan({tokens, 9, "where is it", &scorer, &attention});
  EXPECT_EQ(scorer.texts, (std::vector<std::string>{"t0 t1 ", "t2 t3 "}));
  ASSERT_EQ(scorer.spans.size(), 2u);
  EXPECT_EQ(scorer.spans[1].first, 2);
  EXPECT_EQ(scorer.spans[1].count, 2);
  EXPECT_EQ(scorer.last_query, "where is it");
  EXPECT_EQ(scorer.last_attention, &attention);
}

TEST(PlannerCocktail, TiersAreConfigurable) {
  Options o = options(1, 0.6, 0.1);
  o.set("high", std::string("int8"), {"test.toml", 5});
  o.set("mid", std::string("nf4"), {"test.toml", 6});
  o.set("low", std::string("int4"), {"test.toml", 7});
  CocktailPlanner planner(o);
  EXPECT_EQ(precisions(plan_with(planner, 3, {0.0, 7.0, 10.0})), (std::vector{int4, nf4, int8}));
}

TEST(PlannerCocktail, DefaultsAreChunk32Alpha06Beta01) {
  Options o;
  CocktailPlanner planner(o);
  const Plan plan = plan_with(planner, 6 * 32, {6.1, 0.0, 10.0, 5.9, 9.1, 8.9});
  EXPECT_EQ(plan.chunks.size(), 6u);
  EXPECT_EQ(plan.chunks[5].first_token, 5 * 32);
  EXPECT_DOUBLE_EQ(plan.t_low, 6.0);
  EXPECT_DOUBLE_EQ(plan.t_high, 9.0);
  EXPECT_EQ(precisions(plan), (std::vector{int4, int2, fp16, int2, fp16, int4}));
}

// 11 tokens in chunks of 4: two full chunks scored, the 3-token remainder FP16 and unscored.
TEST(PlannerCocktail, RemainderIsFp16AndUnscored) {
  Options o = options(4, 0.6, 0.1);
  CocktailPlanner planner(o);
  const std::vector<std::string> tokens = make_tokens(11);
  FakeScorer scorer({0.0, 10.0});
  const Plan plan = planner.plan({tokens, 20, "q", &scorer});
  plan.validate();
  EXPECT_EQ(scorer.texts.size(), 2u);
  ASSERT_EQ(plan.chunks.size(), 3u);
  EXPECT_EQ(precisions(plan), (std::vector{int2, fp16, fp16}));
  EXPECT_EQ(plan.chunks[2].first_token, 8);
  EXPECT_EQ(plan.chunks[2].n_tokens, 3);
  EXPECT_TRUE(std::isnan(plan.chunks[2].score));
  EXPECT_EQ(plan.n_tokens(), 11);  // only the context is planned
}

TEST(PlannerCocktail, EmptyContextGivesEmptyPlan) {
  Options o;
  CocktailPlanner planner(o);
  FakeScorer scorer({});
  const Plan plan = planner.plan({{}, 5, "q", &scorer});
  EXPECT_TRUE(plan.chunks.empty());
  EXPECT_EQ(scorer.calls, 0);
  EXPECT_TRUE(std::isnan(plan.t_low));
  EXPECT_TRUE(std::isnan(plan.t_high));
}

TEST(PlannerCocktail, ContextShorterThanAChunkNeedsNoScorer) {
  Options o = options(8, 0.6, 0.1);
  CocktailPlanner planner(o);
  const std::vector<std::string> tokens = make_tokens(5);
  const Plan plan = planner.plan({tokens, 5, "q", nullptr});
  ASSERT_EQ(plan.chunks.size(), 1u);
  EXPECT_EQ(plan.chunks[0].precision, fp16);
  EXPECT_EQ(plan.chunks[0].n_tokens, 5);
  EXPECT_TRUE(std::isnan(plan.t_low));
}

TEST(PlannerCocktail, OneChunkIsMidTier) {
  Options o = options(4, 0.6, 0.1);
  CocktailPlanner planner(o);
  const Plan plan = plan_with(planner, 4, {0.7});
  EXPECT_EQ(precisions(plan), (std::vector{int4}));
  EXPECT_EQ(plan.t_low, 0.7);
  EXPECT_EQ(plan.t_high, 0.7);
}

TEST(PlannerCocktail, EqualScoresAreAllMidTier) {
  Options o = options(2, 0.6, 0.1);
  CocktailPlanner planner(o);
  EXPECT_EQ(precisions(plan_with(planner, 8, {0.3, 0.3, 0.3, 0.3})),
            (std::vector{int4, int4, int4, int4}));
}

// Captures what the library logs while it lives.
class LogCapture {
 public:
  LogCapture()
      : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(out_)), level_(log().level()) {
    log().sinks().push_back(sink_);
    log().set_level(spdlog::level::warn);
  }
  ~LogCapture() {
    std::erase(log().sinks(), sink_);
    log().set_level(level_);
  }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
  spdlog::level::level_enum level_;
};

int count_of(const std::string& text, const std::string& word) {
  int n = 0;
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

// NaN scores do not count toward s_min/s_max (still 0 and 10, so T_low 6, T_high 9); their
// chunks get the middle tier and one warning is logged for the whole plan.
TEST(PlannerCocktail, NanScoresAreMidTierAndWarnedOnce) {
  Options o = options(1, 0.6, 0.1);
  CocktailPlanner planner(o);
  LogCapture capture;
  const Plan plan = plan_with(planner, 6, {kNaN, 0.0, 10.0, 5.0, kNaN, 9.5});
  EXPECT_DOUBLE_EQ(plan.t_low, 6.0);
  EXPECT_DOUBLE_EQ(plan.t_high, 9.0);
  EXPECT_EQ(precisions(plan), (std::vector{int4, int2, fp16, int2, int4, fp16}));
  EXPECT_EQ(count_of(capture.text(), "not finite"), 1) << capture.text();
}

TEST(PlannerCocktail, AllNanScoresAreAllMidTier) {
  Options o = options(1, 0.6, 0.1);
  CocktailPlanner planner(o);
  LogCapture capture;
  const Plan plan = plan_with(planner, 3, {kNaN, kNaN, kNaN});
  EXPECT_EQ(precisions(plan), (std::vector{int4, int4, int4}));
  EXPECT_TRUE(std::isnan(plan.t_low));
  EXPECT_TRUE(std::isnan(plan.t_high));
  EXPECT_EQ(count_of(capture.text(), "not finite"), 1) << capture.text();
}

TEST(PlannerCocktail, MissingScorerIsAnError) {
  Options o = options(2, 0.6, 0.1);
  CocktailPlanner planner(o);
  const std::vector<std::string> tokens = make_tokens(4);
  EXPECT_THAT(error_of<Error>([&] {
                planner.plan({tokens, 4, "q", nullptr});
              }),
              HasSubstr("the cocktail planner needs a chunk scorer"));
}

TEST(PlannerCocktail, WrongNumberOfScoresIsAnError) {
  Options o = options(2, 0.6, 0.1);
  CocktailPlanner planner(o);
  const std::vector<std::string> tokens = make_tokens(6);
  FakeScorer scorer({1.0, 2.0});
  EXPECT_THAT(error_of<Error>([&] {
                planner.plan({tokens, 6, "q", &scorer});
              }),
              HasSubstr("scorer 'fake' returned 2 scores for the 3 chunks"));
}

TEST(PlannerCocktail, AlphaOutOfRangeIsAConfigError) {
  EXPECT_THAT(config_error(options(2, 1.5, 0.0)),
              AllOf(HasSubstr("test.toml:3"), HasSubstr("alpha")));
  EXPECT_THAT(config_error(options(2, -0.1, 0.0)),
              AllOf(HasSubstr("test.toml:3"), HasSubstr("alpha")));
}

TEST(PlannerCocktail, AlphaPlusBetaAboveOneIsAConfigErrorOnBeta) {
  EXPECT_THAT(config_error(options(2, 0.8, 0.3)),
              AllOf(HasSubstr("test.toml:4"), HasSubstr("beta"), HasSubstr("T_low > T_high")));
  Options at_one = options(2, 0.5, 0.5);
  EXPECT_NO_THROW(CocktailPlanner{at_one});
}

TEST(PlannerCocktail, BadPrecisionNameIsAConfigError) {
  Options o = options(2, 0.6, 0.1);
  o.set("high", std::string("fp8"), {"test.toml", 5});
  EXPECT_THAT(config_error(std::move(o)),
              AllOf(HasSubstr("test.toml:5"), HasSubstr("high"), HasSubstr("fp8")));
}

TEST(PlannerCocktail, ChunkSizeZeroIsAConfigError) {
  EXPECT_THAT(config_error(options(0, 0.6, 0.1)),
              AllOf(HasSubstr("test.toml:2"), HasSubstr("chunk_size")));
}

}  // namespace
}  // namespace cocktail::planners
