#include "cocktail/eval/needles.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "cocktail/error.hpp"

namespace cocktail::eval {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
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

TEST(NeedlesTest, SeedOneGivesTheNeedleOfEarlierRuns) {
  // The draws are pinned: the results under bench/results were measured on these cases.
  EXPECT_EQ(make_code_needles(1, 1, "").needles[0].sentence,
            "The serial number of the copper workshop is 8575246.");
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

// "The secret code for the blue vault is 7391042." -> "The secret code for"
std::string phrasing_head(const std::string& sentence) {
  return sentence.substr(0, sentence.find(" the "));
}

TEST(NeedlesTest, NumberKeysNameTheSubjectByANumberTheHaystackLacks) {
  const NeedleSet set = make_code_needles(9, 1, "", KeyKind::numbers);
  ASSERT_EQ(set.needles.size(), 1u);
  const Needle& needle = set.needles[0];
  EXPECT_THAT(needle.sentence, MatchesRegex("The [a-z ]+ (for|of) the [a-z]+ numbered "
                                            "[1-9][0-9]{5} is [1-9][0-9]{6}\\."));
  EXPECT_EQ(needle.sentence, statement_head(set.question) + " is " + needle.answer + ".");
  const std::string key = needle.sentence.substr(needle.sentence.find("numbered ") + 9, 6);
  const NeedleSet avoiding = make_code_needles(9, 1, "room " + key, KeyKind::numbers);
  EXPECT_THAT(avoiding.needles[0].sentence, Not(HasSubstr(key)));
  // Word keys name no number.
  EXPECT_THAT(make_code_needles(9, 1, "").needles[0].sentence, Not(HasSubstr("numbered")));
}

TEST(NeedlesTest, MultiKeyAsksForTheFirstAmongDistractorsOfTheSameForm) {
  const NeedleSet set = make_multi_key_needles(5, 4, "");
  ASSERT_EQ(set.needles.size(), 4u);
  EXPECT_EQ(set.distractors, 3u);
  EXPECT_EQ(set.needles[0].sentence,
            statement_head(set.question) + " is " + set.needles[0].answer + ".");
  std::set<std::string> answers;
  for (const Needle& needle : set.needles) {
    answers.insert(needle.answer);
    EXPECT_EQ(phrasing_head(needle.sentence), phrasing_head(set.needles[0].sentence));
  }
  EXPECT_EQ(answers.size(), 4u);
  for (std::size_t i = 1; i < set.needles.size(); ++i) {
    const std::string& other = set.needles[i].sentence;
    const std::size_t subject = other.find(" the ") + 1;
    EXPECT_THAT(set.question, Not(HasSubstr(other.substr(subject, other.find(" is ") - subject))));
  }
}

TEST(NeedlesTest, MultiValueGivesOneSubjectSeveralAnswersAskedTogether) {
  const NeedleSet set = make_multi_value_needles(8, 3, "");
  ASSERT_EQ(set.needles.size(), 3u);
  EXPECT_EQ(set.distractors, 0u);
  EXPECT_THAT(set.question, StartsWith("What are the "));
  // "One of the secret codes for the blue vault is 1." and "What are the secret codes for the
  // blue vault?" name the same subject in the same words.
  const std::string asked = set.question.substr(13, set.question.size() - 14);
  std::set<std::string> answers;
  for (const Needle& needle : set.needles) {
    EXPECT_EQ(needle.sentence, "One of the " + asked + " is " + needle.answer + ".");
    EXPECT_THAT(needle.answer, MatchesRegex("[1-9][0-9]{6}"));
    answers.insert(needle.answer);
  }
  EXPECT_EQ(answers.size(), 3u);
}

TEST(NeedlesTest, VariableChainBindsEveryNameToTheAskedValue) {
  const NeedleSet set = make_variable_chain(4, 4, "");
  ASSERT_EQ(set.needles.size(), 4u);
  EXPECT_EQ(set.distractors, 0u);
  const std::string& first = set.needles[0].sentence;
  EXPECT_THAT(first, MatchesRegex("VAR [A-Z]{5} = [1-9][0-9]{4}\\."));
  const std::string value = first.substr(first.size() - 6, 5);
  EXPECT_THAT(set.question, HasSubstr("the value " + value + ","));
  std::set<std::string> names;
  for (std::size_t i = 0; i < set.needles.size(); ++i) {
    const Needle& needle = set.needles[i];
    EXPECT_THAT(needle.answer, MatchesRegex("[A-Z]{5}"));
    EXPECT_THAT(needle.sentence, StartsWith("VAR " + needle.answer + " = "));
    if (i > 0) {
      EXPECT_EQ(needle.sentence,
                "VAR " + needle.answer + " = VAR " + set.needles[i - 1].answer + ".");
    }
    EXPECT_THAT(set.question, Not(HasSubstr(needle.answer)));
    names.insert(needle.answer);
  }
  EXPECT_EQ(names.size(), 4u);
}

TEST(NeedlesTest, ChainNamesAndValueAvoidTheHaystackInAnyCase) {
  const NeedleSet set = make_variable_chain(4, 2, "");
  const std::string name = set.needles[0].answer;
  std::string lower = name;
  for (char& c : lower) c = char(c - 'A' + 'a');
  const NeedleSet avoiding = make_variable_chain(4, 2, "sub" + lower + "ed");
  EXPECT_NE(avoiding.needles[0].answer, name);
  const std::string value = set.needles[0].sentence.substr(set.needles[0].sentence.size() - 6, 5);
  EXPECT_THAT(make_variable_chain(4, 2, "in " + value).question, Not(HasSubstr(value)));
}

TEST(NeedlesTest, EveryGeneratorAvoidsAnswersTheHaystackHolds) {
  const auto first_answer = [](const NeedleSet& set) { return set.needles[0].answer; };
  const std::string key = first_answer(make_multi_key_needles(2, 3, ""));
  EXPECT_NE(first_answer(make_multi_key_needles(2, 3, "at " + key)), key);
  const std::string value = first_answer(make_multi_value_needles(2, 3, ""));
  for (const Needle& needle : make_multi_value_needles(2, 3, "at " + value).needles) {
    EXPECT_NE(needle.answer, value);
  }
  const std::string numbered = first_answer(make_code_needles(2, 1, "", KeyKind::numbers));
  EXPECT_NE(first_answer(make_code_needles(2, 1, numbered, KeyKind::numbers)), numbered);
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
  EXPECT_THROW(make_multi_key_needles(1, 145, ""), Error);
  EXPECT_THROW(make_variable_chain(1, 0, ""), Error);
  // Number keys are not limited to the 144 colour and place pairs.
  EXPECT_EQ(make_code_needles(1, 145, "", KeyKind::numbers).needles.size(), 145u);
}

}  // namespace
}  // namespace cocktail::eval
