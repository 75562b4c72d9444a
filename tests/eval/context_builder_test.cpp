#include "cocktail/eval/context_builder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cocktail/error.hpp"
#include "support/error_of.hpp"
#include "word_counter.hpp"

namespace cocktail::eval {
namespace {

using testing::count_words;
using ::testing::HasSubstr;

// Four sentences of two words; a sentence starts at bytes 0, 7, 14 and 21.
const std::string kSource = "Aa bb. Cc dd. Ee ff. Gg hh.";

TEST(FitPrefixTest, CutsAtTheEndOfTheLastWordThatFits) {
  EXPECT_EQ(fit_prefix("one two three four", 2, count_words), 7u);
  EXPECT_EQ(fit_prefix("one two three four", 10, count_words), 18u);
  EXPECT_EQ(fit_prefix("one two three four", 0, count_words), 0u);
  EXPECT_EQ(fit_prefix("  one  two", 1, count_words), 5u);
}

TEST(FitPrefixTest, NeverCountsTheWholeOfALongText) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "w ";
  std::size_t longest = 0;
  int calls = 0;
  const TokenCounter spy = [&](std::string_view s) {
    longest = std::max(longest, s.size());
    ++calls;
    return count_words(s);
  };
  // 100 words end at byte 199; the first window is 100 * 6 + 64 bytes.
  EXPECT_EQ(fit_prefix(text, 100, spy), 199u);
  EXPECT_LE(longest, 664u);
  EXPECT_LE(calls, 12);
}

TEST(SentenceStartTest, PicksTheNearestSentenceStart) {
  EXPECT_EQ(sentence_start_near("One. Two three. Four", 7), 5u);
  EXPECT_EQ(sentence_start_near("One. Two three. Four", 12), 16u);
  EXPECT_EQ(sentence_start_near("One. Two three. Four", 100), 20u);
  EXPECT_EQ(sentence_start_near("One. Two three. Four", 1), 0u);
  // A line break starts a sentence too.
  EXPECT_EQ(sentence_start_near("a b\nc d", 3), 4u);
}

TEST(BuildContextTest, InsertsTheNeedleAtTheNearestSentenceStart) {
  // Budget 7 - 2 = 5 words: "Aa bb. Cc dd. Ee" (16 bytes); depth 0.5 is byte 8, nearest start 7.
  const BuiltContext built = build_context(kSource, 7, {{"N1 x.", 0.5}}, count_words);
  EXPECT_EQ(built.text, "Aa bb. N1 x. Cc dd. Ee");
  ASSERT_EQ(built.needles.size(), 1u);
  EXPECT_EQ(built.needles[0], (CharRange{7, 12}));
}

TEST(BuildContextTest, DepthsZeroAndOneAreTheEnds) {
  const BuiltContext built =
      build_context(kSource, 7, {{"End y.", 1.0}, {"Start x.", 0.0}}, count_words);
  EXPECT_EQ(built.text, "Start x. Aa bb. Cc End y.");
  ASSERT_EQ(built.needles.size(), 2u);
  EXPECT_EQ(built.needles[0], (CharRange{19, 25}));
  EXPECT_EQ(built.needles[1], (CharRange{0, 8}));
}

TEST(BuildContextTest, TightensWhenTokensDoNotAddUp) {
  // Two tokens more once the needle sits inside a longer text: the first fit overshoots to 9,
  // so the budget drops by 2 and "Aa bb. Cc" with the needle makes exactly 7.
  const TokenCounter uneven = [](std::string_view s) {
    const std::int64_t words = count_words(s);
    return words + (s.find("N1") != std::string_view::npos && words > 3 ? 2 : 0);
  };
  const BuiltContext built = build_context(kSource, 7, {{"N1 x.", 0.5}}, uneven);
  EXPECT_EQ(built.text, "Aa bb. N1 x. Cc");
  EXPECT_EQ(uneven(built.text), 7);
}

TEST(BuildContextTest, ShortSourcesAndHugeNeedlesAreErrors) {
  EXPECT_THAT(testing::error_of<Error>([] { build_context(kSource, 50, {}, count_words); }),
              HasSubstr("the haystack has 8 tokens, fewer than the 50 a 50-token context"));
  EXPECT_THAT(testing::error_of<Error>([] {
                build_context(kSource, 1, {{"N1 x.", 0.5}}, count_words);
              }),
              HasSubstr("cannot fit the needles into a 1-token context"));
}

}  // namespace
}  // namespace cocktail::eval
