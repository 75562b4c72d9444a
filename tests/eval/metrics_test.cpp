#include "cocktail/eval/metrics.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cocktail::eval {
namespace {

TEST(NormalizeAnswerTest, FoldsCaseSpacesPunctuationAndCollapsesWhitespace) {
  EXPECT_EQ(normalize_answer("The Code: 7391!"), "the code 7391");
  EXPECT_EQ(normalize_answer("  Hello,\n\tWORLD  "), "hello world");
  EXPECT_EQ(normalize_answer("..."), "");
}

TEST(ContainsScoreTest, FindsTheAnswerAsWholeWords) {
  EXPECT_EQ(contains_score("The secret code is 7391042.", {"7391042"}, AnswerMatch::any), 1.0);
  EXPECT_EQ(contains_score("It is 17391042.", {"7391042"}, AnswerMatch::any), 0.0);
  EXPECT_EQ(contains_score("ADA LIND, of course", {"Ada Lind"}, AnswerMatch::any), 1.0);
}

TEST(ContainsScoreTest, AnyAlternativeCountsAsRight) {
  EXPECT_EQ(contains_score("Lind.", {"Ada Lind", "Lind"}, AnswerMatch::any), 1.0);
  EXPECT_EQ(contains_score("Nobody.", {"Ada Lind", "Lind"}, AnswerMatch::any), 0.0);
}

TEST(ContainsScoreTest, AllAnswersScoreTheFractionFound) {
  const std::vector<std::string> codes = {"1111111", "2222222", "3333333"};
  EXPECT_DOUBLE_EQ(contains_score("They are 1111111 and 3333333.", codes, AnswerMatch::all),
                   2.0 / 3.0);
  EXPECT_EQ(contains_score("1111111, 2222222, 3333333", codes, AnswerMatch::all), 1.0);
}

TEST(ContainsScoreTest, EmptyAnswersAreNeverFound) {
  EXPECT_EQ(contains_score("anything", {}, AnswerMatch::any), 0.0);
  EXPECT_EQ(contains_score("!! ?", {"!!"}, AnswerMatch::any), 0.0);
}

TEST(ContainsScoreTest, PunctuationSplitsWordsWhereF1DeletesIt) {
  // "7,391" is the words "7 391" for contains, but the token "7391" for SQuAD's F1.
  EXPECT_EQ(contains_score("7,391", {"7391"}, AnswerMatch::any), 0.0);
  EXPECT_EQ(token_f1("7,391", {"7391"}, AnswerMatch::any), 1.0);
}

TEST(TokenF1Test, DropsArticlesAndPunctuation) {
  // Tokens [code, is, 7391042] against [7391042]: precision 1/3, recall 1, F1 = 0.5.
  EXPECT_DOUBLE_EQ(token_f1("The code is 7391042.", {"7391042"}, AnswerMatch::any), 0.5);
}

TEST(TokenF1Test, CountsRepeatedTokensOnce) {
  // [x, x, y] against [x, y, y]: two tokens in common, precision = recall = 2/3.
  EXPECT_DOUBLE_EQ(token_f1("x x y", {"x y y"}, AnswerMatch::any), 2.0 / 3.0);
}

TEST(TokenF1Test, TakesTheBestAlternative) {
  EXPECT_DOUBLE_EQ(token_f1("Ada Lind", {"Lind", "Ada Lind"}, AnswerMatch::any), 1.0);
  // [ada, lind] against [lind]: precision 1/2, recall 1, F1 = 2/3.
  EXPECT_DOUBLE_EQ(token_f1("Ada Lind", {"Lind"}, AnswerMatch::any), 2.0 / 3.0);
}

TEST(TokenF1Test, AllAnswersAreOneReference) {
  // [1111111, and, 3333333] against the three codes: 2 in common, P = R = 2/3.
  EXPECT_DOUBLE_EQ(
      token_f1("1111111 and 3333333", {"1111111", "2222222", "3333333"}, AnswerMatch::all),
      2.0 / 3.0);
}

TEST(TokenF1Test, EmptyTokenLists) {
  EXPECT_EQ(token_f1("the", {"a"}, AnswerMatch::any), 1.0);
  EXPECT_EQ(token_f1("", {"x"}, AnswerMatch::any), 0.0);
  EXPECT_EQ(token_f1("x", {}, AnswerMatch::any), 0.0);
}

TEST(ScoreAnswerTest, MultiNeedleCasesNeedEveryAnswer) {
  EvalCase c;
  c.kind = CaseKind::multi_needle;
  c.expected = {"1111111", "2222222"};
  const AnswerScore multi = score_answer(c, "1111111");
  EXPECT_DOUBLE_EQ(multi.contains, 0.5);
  // [1111111] against [1111111, 2222222]: precision 1, recall 1/2.
  EXPECT_DOUBLE_EQ(multi.f1, 2.0 / 3.0);
  c.kind = CaseKind::custom;
  const AnswerScore custom = score_answer(c, "1111111");
  EXPECT_EQ(custom.contains, 1.0);
  EXPECT_EQ(custom.f1, 1.0);
}

TEST(AnswerMatchTest, KindsThatAskForSeveralAnswersNeedThemAll) {
  for (CaseKind kind : kAllCaseKinds) {
    const bool several = kind == CaseKind::multi_value || kind == CaseKind::multi_needle ||
                         kind == CaseKind::variable_tracking || kind == CaseKind::common_words;
    EXPECT_EQ(answer_match(kind), several ? AnswerMatch::all : AnswerMatch::any) << to_string(kind);
  }
}

// A case of `kind` expecting `expected`, scored on `output`.
double contains_for(CaseKind kind, std::vector<std::string> expected, const std::string& output) {
  EvalCase c;
  c.kind = kind;
  c.expected = std::move(expected);
  return score_answer(c, output).contains;
}

TEST(ScoreAnswerTest, MultiValueGivesFullPartialAndZeroCredit) {
  const std::vector<std::string> values = {"1111111", "2222222", "3333333", "4444444"};
  EXPECT_EQ(contains_for(CaseKind::multi_value, values, "4444444, 3333333, 2222222, 1111111"), 1.0);
  EXPECT_EQ(contains_for(CaseKind::multi_value, values, "1111111 and 3333333"), 0.5);
  EXPECT_EQ(contains_for(CaseKind::multi_value, values, "I cannot find them."), 0.0);
}

TEST(ScoreAnswerTest, VariableTrackingCountsTheVariablesNamed) {
  const std::vector<std::string> names = {"QKZTB", "WMLOA", "PXRVE"};
  EXPECT_EQ(contains_for(CaseKind::variable_tracking, names, "VAR QKZTB, VAR WMLOA and VAR PXRVE"),
            1.0);
  EXPECT_DOUBLE_EQ(contains_for(CaseKind::variable_tracking, names, "qkztb; pxrve."), 2.0 / 3.0);
  // Whole words only: a longer name that holds one is not it.
  EXPECT_EQ(contains_for(CaseKind::variable_tracking, names, "QKZTBX"), 0.0);
}

TEST(ScoreAnswerTest, CommonWordsCountTheWordsNamedWhateverElseIsListed) {
  const std::vector<std::string> words = {"harbour", "lantern", "meadow", "copper"};
  EXPECT_EQ(contains_for(CaseKind::common_words, words,
                         "1. Copper 2. harbour 3. lantern 4. meadow 5. violin"),
            1.0);
  EXPECT_EQ(contains_for(CaseKind::common_words, words, "1. harbour 2. violin"), 0.25);
  EXPECT_EQ(contains_for(CaseKind::common_words, words, "harbours and lanterns"), 0.0);
}

TEST(ScoreAnswerTest, SingleAnswerKindsScoreOneOrZero) {
  for (CaseKind kind :
       {CaseKind::niah, CaseKind::niah_number_key, CaseKind::multi_key, CaseKind::passkey}) {
    EXPECT_EQ(contains_for(kind, {"7391042"}, "It is 7391042."), 1.0) << to_string(kind);
    // multi-key: a distractor's value is not the asked one.
    EXPECT_EQ(contains_for(kind, {"7391042"}, "It is 5550123."), 0.0) << to_string(kind);
  }
}

}  // namespace
}  // namespace cocktail::eval
