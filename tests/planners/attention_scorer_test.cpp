#include "attention_scorer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "support/error_of.hpp"

namespace cocktail::scorers {
namespace {

using ::cocktail::testing::error_of;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Options options(const std::string& aggregate) {
  Options o("scorer.attention", {"test.toml", 1});
  o.set("aggregate", aggregate, {"test.toml", 2});
  o.set("sink_tokens", std::int64_t{0}, {"test.toml", 3});
  return o;
}

// Two layers × two heads over 6 context tokens; chunks [0, 2), [2, 4), [4, 6).
QueryAttention attention() {
  return {{3, 5},
          2,
          6,
          {
              0.5f, 0.5f, 0.0f, 0.0f, 1.0f, 0.0f,  // layer 3, head 0
              0.0f, 0.0f, 2.0f, 0.0f, 0.0f, 0.0f,  // layer 3, head 1
              0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f,  // layer 5, head 0
              0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.4f,  // layer 5, head 1
          }};
}

std::vector<double> score(AttentionScorer& scorer, const QueryAttention* qa) {
  const std::vector<std::string> texts(3);
  const std::vector<TokenSpan> spans = {{0, 2}, {2, 2}, {4, 2}};
  return scorer.score({texts, spans, "q", qa});
}

TEST(ScorerAttention, MeanOverLayersAndHeadsOfTheChunkMass) {
  Options o = options("mean");
  AttentionScorer scorer(o);
  const QueryAttention qa = attention();
  // Chunk masses per (layer, head): chunk 0: 1.0, 0, 0.2, 0; chunk 1: 0, 2.0, 0.2, 0;
  // chunk 2: 1.0, 0, 0.2, 0.4.
  const std::vector<double> s = score(scorer, &qa);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(s[0], 1.2 / 4, 1e-6);
  EXPECT_NEAR(s[1], 2.2 / 4, 1e-6);
  EXPECT_NEAR(s[2], 1.6 / 4, 1e-6);
}

TEST(ScorerAttention, MaxFollowsTheStrongestHead) {
  Options o = options("max");
  AttentionScorer scorer(o);
  const QueryAttention qa = attention();
  const std::vector<double> s = score(scorer, &qa);
  EXPECT_NEAR(s[0], 1.0, 1e-6);
  EXPECT_NEAR(s[1], 2.0, 1e-6);
  EXPECT_NEAR(s[2], 1.0, 1e-6);
}

TEST(ScorerAttention, SinkTokensAreLeftOut) {
  Options o = options("mean");
  o.set("sink_tokens", std::int64_t{1}, {"test.toml", 3});
  AttentionScorer scorer(o);
  const QueryAttention qa = attention();
  // Token 0 no longer counts: chunk 0 keeps 0.5 (layer 3, head 0) and 0.1 (layer 5, head 0).
  EXPECT_NEAR(score(scorer, &qa)[0], 0.6 / 4, 1e-6);
}

TEST(ScorerAttention, LayersAreARangeWithNegativesFromTheEnd) {
  Options o("scorer.attention", {"test.toml", 1});
  o.set("first_layer", std::int64_t{-6}, {"test.toml", 2});
  o.set("layer_step", std::int64_t{2}, {"test.toml", 3});
  AttentionScorer scorer(o);
  EXPECT_THAT(scorer.query_attention_layers(30), ElementsAre(24, 26, 28));
  Options defaults;
  EXPECT_EQ(AttentionScorer(defaults).query_attention_layers(4).size(), 4u);
  Options beyond("scorer.attention", {"test.toml", 1});
  beyond.set("last_layer", std::int64_t{40}, {"test.toml", 2});
  EXPECT_THAT(error_of<Error>([&] { AttentionScorer(beyond).query_attention_layers(30); }),
              AllOf(HasSubstr("last_layer = 40"), HasSubstr("30 layers")));
}

TEST(ScorerAttention, WithoutAModelRunItSaysSo) {
  Options o;
  AttentionScorer scorer(o);
  EXPECT_THAT(error_of<Error>([&] { score(scorer, nullptr); }),
              HasSubstr("must fill PlanInput::query_attention or pick a text scorer"));
  QueryAttention short_run = attention();
  short_run.n_tokens = 5;
  short_run.mass.resize(4 * 5);
  EXPECT_THAT(error_of<Error>([&] { score(scorer, &short_run); }),
              HasSubstr("beyond the 5 tokens"));
}

TEST(ScorerAttention, BadAggregateIsAConfigError) {
  Options o = options("median");
  EXPECT_THAT(error_of<ConfigError>([&] { AttentionScorer s(o); }),
              AllOf(HasSubstr("test.toml:2"), HasSubstr("aggregate")));
}

}  // namespace
}  // namespace cocktail::scorers
