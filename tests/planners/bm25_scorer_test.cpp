#include "bm25_scorer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cocktail/error.hpp"

namespace cocktail::scorers {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<double> score(Bm25Scorer& scorer, const std::vector<std::string>& chunks,
                          std::string_view query) {
  return scorer.score(ScoringInput{chunks, {}, query});
}

std::vector<double> score(const std::vector<std::string>& chunks, std::string_view query) {
  Options o;
  Bm25Scorer scorer(o);
  return score(scorer, chunks, query);
}

TEST(ScorerBm25, TermsAreLowercasedAsciiWordsKeepingUtf8) {
  EXPECT_EQ(Bm25Scorer::terms("Hello, WORLD!  naïve x2_y--"),
            (std::vector<std::string>{"hello", "world", "naïve", "x2", "y"}));
  EXPECT_TRUE(Bm25Scorer::terms(" ,.; ").empty());
}

// Three documents, k1 = 1.2, b = 0.75, query "cat mat the".
//   lengths 3, 6, 2 -> avglen 11/3; N = 3; df: cat 1, mat 1, the 2
//   idf(cat) = idf(mat) = ln(1 + 2.5/1.5) = ln(8/3);  idf(the) = ln(1 + 1.5/2.5) = ln(1.6)
//   doc 0: norm = 1/4 + (3/4)(3)(3/11) = 19/22; 1 + 1.2·19/22 = 112/55; each tf-1 term weighs
//          2.2·55/112 = 121/112, so score = (ln(8/3) + ln(1.6))·121/112
//   doc 1: norm = 1/4 + (3/4)(6)(3/11) = 65/44; k1·norm = 39/22;
//          mat (tf 1): 2.2/(1 + 39/22) = 242/305;  the (tf 2): 4.4/(2 + 39/22) = 484/415
//   doc 2: no query term -> 0
TEST(ScorerBm25, MatchesHandComputedScores) {
  const std::vector<double> s =
      score({"the cat sat", "The dog sat on the MAT.", "Cats, dogs!"}, "cat mat the");
  ASSERT_EQ(s.size(), 3u);
  const double idf_rare = std::log(8.0 / 3.0);
  const double idf_the = std::log(1.6);
  EXPECT_NEAR(s[0], (idf_rare + idf_the) * 121.0 / 112.0, 1e-12);
  EXPECT_NEAR(s[1], idf_rare * 242.0 / 305.0 + idf_the * 484.0 / 415.0, 1e-12);
  EXPECT_EQ(s[2], 0.0);
}

TEST(ScorerBm25, RepeatedQueryTermsCountEachTime) {
  const std::vector<std::string> chunks = {"red fox", "blue bird", "green frog"};
  const std::vector<double> once = score(chunks, "fox");
  const std::vector<double> twice = score(chunks, "fox FOX");
  EXPECT_GT(once[0], 0.0);
  EXPECT_DOUBLE_EQ(twice[0], 2.0 * once[0]);
}

TEST(ScorerBm25, ChunkWithTheQueryWordsRanksFirst) {
  const std::vector<std::string> chunks = {
      "The weather in the valley was mild all spring.",
      "Farmers planted wheat and barley near the river.",
      "The secret password for the vault is swordfish.",
      "Children played by the old mill every afternoon.",
  };
  const std::vector<double> s = score(chunks, "What is the vault password?");
  EXPECT_EQ(std::ranges::max_element(s) - s.begin(), 2);
}

TEST(ScorerBm25, EmptyInputs) {
  EXPECT_TRUE(score({}, "anything").empty());
  EXPECT_EQ(score({"", " "}, "word"), (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(score({"some text"}, ""), (std::vector<double>{0.0}));
}

TEST(ScorerBm25, ParametersAreConfigurable) {
  Options o("scorer.bm25", {"test.toml", 1});
  o.set("k1", 0.0, {"test.toml", 2});
  Bm25Scorer scorer(o);
  // With k1 = 0 a present term contributes exactly its idf: ln(1 + 1.5/1.5) = ln 2.
  const std::vector<std::string> chunks = {"alpha alpha beta", "gamma"};
  EXPECT_NEAR(score(scorer, chunks, "alpha")[0], std::log(2.0), 1e-15);
}

TEST(ScorerBm25, OutOfRangeParametersAreConfigErrors) {
  for (const char* key : {"k1", "b"}) {
    Options o("scorer.bm25", {"test.toml", 1});
    o.set(key, 11.0, {"test.toml", 7});
    try {
      Bm25Scorer scorer(o);
      ADD_FAILURE() << "no ConfigError for " << key;
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr("test.toml:7"), HasSubstr(key)));
    }
  }
}

}  // namespace
}  // namespace cocktail::scorers
