#include "cocktail/eval/generate.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "cocktail/error.hpp"
#include "cocktail/eval/haystack.hpp"
#include "support/error_of.hpp"
#include "word_counter.hpp"

namespace cocktail::eval {
namespace {

namespace fs = std::filesystem;
using testing::count_words;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const fs::path kData = COCKTAIL_EVAL_TEST_DATA;

Suite small_suite() {
  Suite suite;
  suite.source = "small";
  suite.lengths = {100, 200};
  suite.depths = {0.0, 0.5, 1.0};
  suite.kinds = {CaseKind::niah, CaseKind::multi_needle, CaseKind::passkey};
  suite.needles = 3;
  return suite;
}

const std::string& haystack() {
  static const std::string text = load_haystack(kData / "haystack");
  return text;
}

const EvalCase& find_case(const std::vector<EvalCase>& cases, const std::string& id) {
  for (const EvalCase& c : cases) {
    if (c.id == id) return c;
  }
  throw Error("no case " + id);
}

std::string needle_text(const EvalCase& c, std::size_t i) {
  return c.context.substr(c.needles[i].begin, c.needles[i].end - c.needles[i].begin);
}

TEST(HaystackTest, JoinsTheTextFilesInNameOrder) {
  const std::string& text = haystack();
  EXPECT_THAT(text, StartsWith("A garden is a slow conversation"));
  EXPECT_THAT(text, HasSubstr("what grew where.\n\nRivers shape the towns"));
  EXPECT_EQ(text.substr(text.size() - 23), "a neighbour with moods.");
  // 168 + 139 words; the blank file and notes.md add nothing.
  EXPECT_EQ(count_words(text), 307);
}

TEST(HaystackTest, MissingOrEmptyFoldersAreErrors) {
  EXPECT_THAT(testing::error_of<Error>([] { load_haystack(kData / "nowhere"); }),
              HasSubstr("nowhere does not exist or is not a folder"));
  const fs::path empty = fs::path(::testing::TempDir()) / "eval_empty_haystack";
  fs::create_directories(empty);
  std::ofstream(empty / "blank.txt") << "\n  \n";
  EXPECT_THAT(testing::error_of<Error>([&] { load_haystack(empty); }),
              HasSubstr("has no .txt file with text"));
}

TEST(GenerateTest, MakesEveryKindAtEveryLengthAndDepth) {
  const std::vector<EvalCase> cases = generate_cases(small_suite(), haystack(), count_words);
  std::vector<std::string> ids;
  for (const EvalCase& c : cases) ids.push_back(c.id);
  EXPECT_THAT(
      ids, ElementsAre("niah-100-d0.00", "niah-100-d0.50", "niah-100-d1.00", "niah-200-d0.00",
                       "niah-200-d0.50", "niah-200-d1.00", "multi-needle-100", "multi-needle-200",
                       "passkey-100-d0.00", "passkey-100-d0.50", "passkey-100-d1.00",
                       "passkey-200-d0.00", "passkey-200-d0.50", "passkey-200-d1.00"));
  for (const EvalCase& c : cases) {
    // One token per word adds up exactly, so every context has its target length.
    EXPECT_EQ(count_words(c.context), c.target_tokens) << c.id;
    ASSERT_EQ(c.needles.size(), c.expected.size()) << c.id;
    for (std::size_t i = 0; i < c.needles.size(); ++i) {
      EXPECT_THAT(needle_text(c, i), HasSubstr(c.expected[i])) << c.id;
    }
  }
}

TEST(GenerateTest, NeedlesSitAtTheirDepths) {
  const std::vector<EvalCase> cases = generate_cases(small_suite(), haystack(), count_words);
  const EvalCase& start = find_case(cases, "niah-200-d0.00");
  EXPECT_EQ(start.needles[0].begin, 0u);
  EXPECT_EQ(start.kind, CaseKind::niah);
  EXPECT_THAT(start.question, ::testing::EndsWith("?"));
  const EvalCase& end = find_case(cases, "niah-200-d1.00");
  EXPECT_EQ(end.needles[0].end, end.context.size());
  const EvalCase& middle = find_case(cases, "niah-200-d0.50");
  const double where = double(middle.needles[0].begin) / double(middle.context.size());
  EXPECT_NEAR(where, 0.5, 0.15);
  // Inserted at a sentence start: after whitespace that follows a full stop or holds a line break.
  const std::string before = middle.context.substr(0, middle.needles[0].begin);
  const std::size_t last = before.find_last_not_of(" \n");
  ASSERT_LT(last + 1, before.size());
  EXPECT_TRUE(before[last] == '.' || before.find('\n', last) != std::string::npos) << before;
}

TEST(GenerateTest, MultiNeedleSpreadsItsNeedles) {
  const std::vector<EvalCase> cases = generate_cases(small_suite(), haystack(), count_words);
  const EvalCase& multi = find_case(cases, "multi-needle-200");
  EXPECT_EQ(multi.kind, CaseKind::multi_needle);
  ASSERT_THAT(multi.depths, ElementsAre(1.0 / 6, 0.5, 5.0 / 6));
  ASSERT_EQ(multi.needles.size(), 3u);
  EXPECT_LT(multi.needles[0].end, multi.needles[1].begin);
  EXPECT_LT(multi.needles[1].end, multi.needles[2].begin);
  EXPECT_THAT(multi.question, StartsWith("What are the "));
}

TEST(GenerateTest, PasskeyHidesInTheClassicFillerOrTheHaystack) {
  Suite suite = small_suite();
  suite.kinds = {CaseKind::passkey};
  const EvalCase classic = generate_cases(suite, "", count_words).front();
  EXPECT_THAT(classic.context, StartsWith("The pass key is "));
  EXPECT_THAT(classic.context, HasSubstr("The grass is green. The sky is blue."));
  EXPECT_EQ(classic.question, "What is the pass key?");
  suite.passkey_filler = PasskeyFiller::haystack;
  const EvalCase in_haystack = generate_cases(suite, haystack(), count_words).front();
  EXPECT_THAT(in_haystack.context, HasSubstr("A garden is a slow conversation"));
}

TEST(GenerateTest, CasesDependOnTheSeedAndTheirIdOnly) {
  const auto all = generate_cases(small_suite(), haystack(), count_words);
  Suite one_length = small_suite();
  one_length.lengths = {200};
  const auto fewer = generate_cases(one_length, haystack(), count_words);
  EXPECT_EQ(find_case(all, "niah-200-d0.50").context, find_case(fewer, "niah-200-d0.50").context);
  Suite reseeded = small_suite();
  reseeded.seed = 2;
  const auto other = generate_cases(reseeded, haystack(), count_words);
  EXPECT_NE(find_case(all, "niah-200-d0.50").expected, find_case(other, "niah-200-d0.50").expected);
}

TEST(GenerateTest, TooShortOrMissingHaystacksAreErrors) {
  Suite suite = small_suite();
  suite.lengths = {1000};
  EXPECT_THAT(testing::error_of<Error>([&] { generate_cases(suite, haystack(), count_words); }),
              HasSubstr("the haystack has 307 tokens"));
  EXPECT_THAT(testing::error_of<Error>([] { generate_cases(small_suite(), "", count_words); }),
              HasSubstr("the suite small generates cases in a haystack"));
  EXPECT_THAT(
      testing::error_of<Error>([] { load_suite_cases(small_suite(), std::nullopt, count_words); }),
      HasSubstr("pass --haystack DIR"));
}

TEST(GenerateTest, WrittenNeedlesGoToTheNiahCasesInTurn) {
  Suite suite = small_suite();
  suite.kinds = {CaseKind::passkey, CaseKind::niah};
  const std::vector<WrittenNeedle> written = {
      {"The ferry is called Quillhaven.", "What is the ferry called?", "Quillhaven", 1},
      {"The clock chimes 417 times.", "How often does the clock chime?", "417", 2},
      {"The gate is painted saffron.", "What colour is the gate?", "saffron", 3},
      {"The dog is named Pemberwick.", "What is the dog named?", "Pemberwick", 4}};
  const auto cases = generate_cases(suite, haystack(), count_words, written);
  // Two lengths x three depths of NIAH: the needles in turn, the first two twice.
  const std::vector<std::string> ids = {"niah-100-d0.00", "niah-100-d0.50", "niah-100-d1.00",
                                        "niah-200-d0.00", "niah-200-d0.50", "niah-200-d1.00"};
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const EvalCase& c = find_case(cases, ids[i]);
    const WrittenNeedle& needle = written[i % written.size()];
    EXPECT_EQ(needle_text(c, 0), needle.statement) << c.id;
    EXPECT_EQ(c.question, needle.question) << c.id;
    EXPECT_THAT(c.expected, ElementsAre(needle.answer)) << c.id;
  }
  // Passkeys keep their own.
  EXPECT_EQ(find_case(cases, "passkey-100-d0.00").question, "What is the pass key?");
}

TEST(GenerateTest, AWrittenAnswerTheHaystackHoldsIsAnError) {
  Suite suite = small_suite();
  suite.kinds = {CaseKind::niah};
  suite.needle_file = "mine.jsonl";
  const std::vector<WrittenNeedle> written = {
      {"The ferry is called Quillhaven.", "What is the ferry called?", "Quillhaven", 1},
      {"The best place is the garden.", "What is the best place?", "Garden", 2}};
  EXPECT_THAT(
      testing::error_of<Error>([&] { generate_cases(suite, haystack(), count_words, written); }),
      HasSubstr("mine.jsonl:2: answer = \"Garden\" is in the haystack"));
}

TEST(LoadSuiteCasesTest, TheOverrideHaystackWinsAndJsonlCasesFollow) {
  Suite suite = small_suite();
  suite.haystack = kData / "nowhere";
  suite.cases = kData / "cases" / "cases.jsonl";
  const auto cases = load_suite_cases(suite, kData / "haystack", count_words);
  ASSERT_EQ(cases.size(), 16u);
  EXPECT_EQ(cases[14].id, "keeper");
  EXPECT_EQ(cases[15].id, "steps");
}

TEST(LoadSuiteCasesTest, JsonlIdsMustNotRepeatGeneratedOnes) {
  const fs::path file = fs::path(::testing::TempDir()) / "eval_clash.jsonl";
  std::ofstream(file)
      << R"({"id": "niah-100-d0.00", "question": "q", "expected": "e", "context": "c"})"
      << "\n";
  Suite suite = small_suite();
  suite.cases = file;
  EXPECT_THAT(
      testing::error_of<Error>([&] { load_suite_cases(suite, kData / "haystack", count_words); }),
      HasSubstr("id = \"niah-100-d0.00\" is also a generated case's id"));
}

}  // namespace
}  // namespace cocktail::eval
