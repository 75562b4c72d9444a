#include "cocktail/eval/common_words.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "cocktail/error.hpp"
#include "support/error_of.hpp"
#include "word_counter.hpp"

namespace cocktail::eval {
namespace {

using testing::count_words;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// "word0", "word1", ...: distinct words, one token each for count_words.
std::vector<std::string> made_up_words(int n) {
  std::vector<std::string> words;
  for (int i = 0; i < n; ++i) words.push_back("word" + std::to_string(i));
  return words;
}

// How often each word of the numbered list "1. a 2. b ..." on the context's second line occurs,
// checking the numbering on the way.
std::map<std::string, int> occurrences(const std::string& context) {
  std::istringstream list(context.substr(context.find('\n') + 1));
  std::map<std::string, int> times;
  int expected_number = 1;
  for (std::string number, word; list >> number >> word; ++expected_number) {
    EXPECT_EQ(number, std::to_string(expected_number) + ".");
    ++times[word];
  }
  return times;
}

TEST(CommonWordsTest, VocabularyIsTheDistinctLongWordsLessTheQuestions) {
  EXPECT_THAT(
      list_vocabulary("The Harbour, harbour; cat LANTERNS most common 12345 words tea-pots"),
      ElementsAre("harbour", "lanterns", "pots"));
}

TEST(CommonWordsTest, RepeatsAreRulersByLength) {
  EXPECT_EQ(word_repeats(4095).common, 6);
  EXPECT_EQ(word_repeats(4095).other, 1);
  EXPECT_EQ(word_repeats(4096).common, 30);
  EXPECT_EQ(word_repeats(4096).other, 3);
}

TEST(CommonWordsTest, TheCommonWordsAppearMostOftenAndTheListFillsItsLength) {
  const std::vector<std::string> vocabulary = made_up_words(300);
  const WordList list = make_common_words(3, 4, 300, vocabulary, count_words);
  EXPECT_THAT(list.context, StartsWith("Below is a numbered list of words."));
  EXPECT_EQ(list.question, "What are the 4 most common words in the above list?");
  ASSERT_EQ(list.common.size(), 4u);
  const std::map<std::string, int> times = occurrences(list.context);
  int others = 0;
  for (const auto& [word, n] : times) {
    const bool common =
        std::find(list.common.begin(), list.common.end(), word) != list.common.end();
    EXPECT_EQ(n, common ? 6 : 1) << word;
    others += common ? 0 : 1;
  }
  EXPECT_EQ(times.size(), 4u + std::size_t(others));
  // Each entry is two words; one more would not fit.
  const std::int64_t tokens = count_words(list.context);
  EXPECT_LE(tokens, 300);
  EXPECT_GT(tokens + 2, 300);
  for (const std::string& word : list.common) EXPECT_THAT(list.question, Not(HasSubstr(word)));
}

TEST(CommonWordsTest, TheSeedDecides) {
  const std::vector<std::string> vocabulary = made_up_words(300);
  const WordList a = make_common_words(3, 4, 200, vocabulary, count_words);
  EXPECT_EQ(make_common_words(3, 4, 200, vocabulary, count_words).context, a.context);
  const WordList b = make_common_words(4, 4, 200, vocabulary, count_words);
  EXPECT_NE(b.context, a.context);
  EXPECT_NE(b.common, a.common);
}

TEST(CommonWordsTest, TooFewWordsOrTooShortAListAreErrors) {
  EXPECT_THAT(testing::error_of<Error>(
                  [] { make_common_words(1, 4, 1000, made_up_words(50), count_words); }),
              HasSubstr("the haystack has 50 distinct words of 4 or more letters, too few for a "
                        "1000-token common-words list"));
  EXPECT_THAT(testing::error_of<Error>(
                  [] { make_common_words(1, 10, 80, made_up_words(50), count_words); }),
              HasSubstr("10 common words, 6 times each, do not fit in 80 tokens"));
  EXPECT_THROW(make_common_words(1, 4, 1000, made_up_words(4), count_words), Error);
}

}  // namespace
}  // namespace cocktail::eval
