#include "cocktail/eval/needles.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "cocktail/error.hpp"

namespace cocktail::eval {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

// "What is the secret code for the blue vault?" -> "The secret code for the blue vault"
std::string statement_head(const std::string& question) {
  std::string head = question.substr(8, question.size() - 9);
  head[0] = 'T';
  return head;
}

TEST(NeedlesTest, OneNeedleIsAFactAndItsQuestion) {
  const NeedleSet set = make_code_needles(42, 1, "");
  ASSERT_EQ(set.needles.size(), 1u);
  const Needle& needle = set.needles[0];
  EXPECT_THAT(needle.answer, MatchesRegex("[1-9][0-9]{6}"));
  EXPECT_THAT(set.question, StartsWith("What is the "));
  EXPECT_EQ(needle.sentence, statement_head(set.question) + " is " + needle.answer + ".");
}

TEST(NeedlesTest, TheSeedDecides) {
  EXPECT_EQ(make_code_needles(7, 3, "").question, make_code_needles(7, 3, "").question);
  std::set<std::string> sentences;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    sentences.insert(make_code_needles(seed, 1, "").needles[0].sentence);
  }
  EXPECT_EQ(sentences.size(), 6u);
}

TEST(NeedlesTest, SeveralNeedlesAreDistinctAndAskedTogether) {
  const NeedleSet set = make_code_needles(5, 3, "");
  ASSERT_EQ(set.needles.size(), 3u);
  EXPECT_THAT(set.question, StartsWith("What are the "));
  std::set<std::string> answers;
  for (const Needle& needle : set.needles) {
    answers.insert(needle.answer);
    // The subject runs from the first lower-case " the " to " is ".
    const std::size_t begin = needle.sentence.find(" the ") + 1;
    const std::string subject = needle.sentence.substr(begin, needle.sentence.find(" is ") - begin);
    EXPECT_THAT(set.question, HasSubstr(subject));
  }
  EXPECT_EQ(answers.size(), 3u);
  EXPECT_THAT(set.question, HasSubstr(" and the "));
}

TEST(NeedlesTest, AnswersAvoidTheHaystack) {
  const std::string first = make_code_needles(11, 1, "").needles[0].answer;
  const std::string again = make_code_needles(11, 1, "in " + first + " years").needles[0].answer;
  EXPECT_NE(again, first);
  const std::string key = make_passkey(11, "").needles[0].answer;
  EXPECT_NE(make_passkey(11, "code " + key).needles[0].answer, key);
}

TEST(NeedlesTest, PasskeyIsTheClassicSentence) {
  const NeedleSet set = make_passkey(3, "");
  ASSERT_EQ(set.needles.size(), 1u);
  EXPECT_THAT(set.needles[0].answer, MatchesRegex("[1-9][0-9]{4}"));
  EXPECT_EQ(set.needles[0].sentence, "The pass key is " + set.needles[0].answer + ". Remember it.");
  EXPECT_EQ(set.question, "What is the pass key?");
}

TEST(NeedlesTest, CountOutOfRangeIsAnError) {
  EXPECT_THROW(make_code_needles(1, 0, ""), Error);
  EXPECT_THROW(make_code_needles(1, 145, ""), Error);
}

}  // namespace
}  // namespace cocktail::eval
