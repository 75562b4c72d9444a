#include "cocktail/eval/generate.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "cocktail/error.hpp"
#include "cocktail/eval/common_words.hpp"
#include "cocktail/eval/haystack.hpp"
#include "cocktail/eval/metrics.hpp"
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

Suite ruler_suite() {
  Suite suite = small_suite();
  suite.kinds = {CaseKind::niah_number_key, CaseKind::multi_key,         CaseKind::multi_value,
                 CaseKind::multi_needle,    CaseKind::variable_tracking, CaseKind::common_words};
  suite.samples = 2;
  suite.common_words = 3;
  return suite;
}

std::vector<std::string> ids_of(const std::vector<EvalCase>& cases) {
  std::vector<std::string> ids;
  for (const EvalCase& c : cases) ids.push_back(c.id);
  return ids;
}

TEST(GenerateRulerTest, MakesEveryKindAtEveryLengthDepthAndSample) {
  const std::vector<EvalCase> cases = generate_cases(ruler_suite(), haystack(), count_words);
  const std::vector<std::string> ids = ids_of(cases);
  std::vector<std::string> expected;
  for (const char* kind : {"niah-number-key", "multi-key"}) {
    for (const char* length : {"100", "200"}) {
      for (const char* depth : {"0.00", "0.50", "1.00"}) {
        expected.push_back(std::string(kind) + "-" + length + "-d" + depth);
      }
    }
  }
  for (const char* kind : {"multi-value", "multi-needle", "variable-tracking", "common-words"}) {
    for (const char* length : {"100", "200"}) {
      expected.push_back(std::string(kind) + "-" + length);
      expected.push_back(std::string(kind) + "-" + length + "-s2");
    }
  }
  EXPECT_EQ(ids, expected);
}

TEST(GenerateRulerTest, NeedleCasesHoldTheirAnswersWhereTheHaystackHasNone) {
  for (const EvalCase& c : generate_cases(ruler_suite(), haystack(), count_words)) {
    if (c.kind == CaseKind::common_words) continue;
    EXPECT_EQ(count_words(c.context), c.target_tokens) << c.id;
    ASSERT_EQ(c.needles.size(), c.expected.size()) << c.id;
    ASSERT_EQ(c.depths.size(), c.expected.size()) << c.id;
    for (std::size_t i = 0; i < c.needles.size(); ++i) {
      EXPECT_THAT(needle_text(c, i), HasSubstr(c.expected[i])) << c.id;
      EXPECT_EQ(contains_score(haystack(), {c.expected[i]}, AnswerMatch::any), 0.0) << c.id;
      EXPECT_EQ(contains_score(c.question, {c.expected[i]}, AnswerMatch::any), 0.0) << c.id;
    }
  }
}

TEST(GenerateRulerTest, CasesOfEachKindHoldWhatTheKindAsks) {
  const std::vector<EvalCase> cases = generate_cases(ruler_suite(), haystack(), count_words);
  const EvalCase& number_key = find_case(cases, "niah-number-key-200-d0.50");
  EXPECT_THAT(needle_text(number_key, 0), ::testing::MatchesRegex(".* numbered [0-9]{6} is .*"));
  const EvalCase& values = find_case(cases, "multi-value-200");
  EXPECT_EQ(values.expected.size(), 3u);
  EXPECT_THAT(needle_text(values, 0), StartsWith("One of the "));
  const EvalCase& chain = find_case(cases, "variable-tracking-200");
  ASSERT_EQ(chain.expected.size(), 3u);
  EXPECT_EQ(needle_text(chain, 2),
            "VAR " + chain.expected[2] + " = VAR " + chain.expected[1] + ".");
  EXPECT_LT(chain.needles[0].end, chain.needles[1].begin);
  EXPECT_LT(chain.needles[1].end, chain.needles[2].begin);
  const EvalCase& queries = find_case(cases, "multi-needle-200");
  EXPECT_EQ(queries.expected.size(), 3u);
  EXPECT_THAT(queries.question, HasSubstr(" and the "));
}

TEST(GenerateRulerTest, MultiKeyHidesDistractorsOfTheSameFormAroundTheAskedNeedle) {
  const std::vector<EvalCase> cases = generate_cases(ruler_suite(), haystack(), count_words);
  const EvalCase& c = find_case(cases, "multi-key-200-d0.00");
  ASSERT_EQ(c.expected.size(), 1u);
  ASSERT_THAT(c.depths, ElementsAre(0.0));
  EXPECT_EQ(c.needles[0].begin, 0u);
  // "The secret code for the blue vault is 1234567." -> "The secret code for the "
  const std::string asked = needle_text(c, 0);
  const std::string head = asked.substr(0, asked.find(" the ") + 5);
  std::vector<std::size_t> starts;
  for (std::size_t at = c.context.find(head); at != std::string::npos;
       at = c.context.find(head, at + 1)) {
    starts.push_back(at);
  }
  // The asked needle and two distractors, at depths 1/3 and 2/3.
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_NEAR(double(starts[1]) / double(c.context.size()), 1.0 / 3, 0.15);
  EXPECT_NEAR(double(starts[2]) / double(c.context.size()), 2.0 / 3, 0.15);
  EXPECT_THAT(c.question, StartsWith("What is "));
}

TEST(GenerateRulerTest, LaterSamplesShiftTheirEvenlySpreadNeedles) {
  const std::vector<EvalCase> cases = generate_cases(ruler_suite(), haystack(), count_words);
  EXPECT_THAT(find_case(cases, "multi-value-200").depths, ElementsAre(1.0 / 6, 0.5, 5.0 / 6));
  const EvalCase& second = find_case(cases, "multi-value-200-s2");
  ASSERT_EQ(second.depths.size(), 3u);
  EXPECT_NE(second.depths[0], 1.0 / 6);
  EXPECT_NEAR(second.depths[1] - second.depths[0], 1.0 / 3, 1e-12);
  EXPECT_NEAR(second.depths[2] - second.depths[1], 1.0 / 3, 1e-12);
  EXPECT_NE(second.expected, find_case(cases, "multi-value-200").expected);
}

TEST(GenerateRulerTest, CommonWordsListTheHaystacksWords) {
  const std::vector<EvalCase> cases = generate_cases(ruler_suite(), haystack(), count_words);
  const EvalCase& c = find_case(cases, "common-words-200");
  EXPECT_EQ(c.kind, CaseKind::common_words);
  EXPECT_EQ(c.question, "What are the 3 most common words in the above list?");
  EXPECT_TRUE(c.needles.empty());
  const std::vector<std::string> vocabulary = list_vocabulary(haystack());
  ASSERT_EQ(c.expected.size(), 3u);
  for (const std::string& word : c.expected) {
    EXPECT_THAT(vocabulary, ::testing::Contains(word));
    // 6 times each below 4,096 tokens, as " 12. word" entries.
    std::size_t times = 0;
    for (std::size_t at = c.context.find(". " + word + " "); at != std::string::npos;
         at = c.context.find(". " + word + " ", at + 1)) {
      ++times;
    }
    EXPECT_GE(times + (c.context.ends_with(". " + word) ? 1u : 0u), 6u) << word;
  }
  EXPECT_LE(count_words(c.context), 200);
  EXPECT_GT(count_words(c.context), 190);
  EXPECT_NE(find_case(cases, "common-words-200-s2").expected, c.expected);
}

TEST(GenerateRulerTest, KindLengthsAddLengthsWithoutChangingOtherCases) {
  Suite suite = ruler_suite();
  suite.lengths = {100};
  suite.kind_lengths[CaseKind::multi_key] = {100, 200};
  const std::vector<EvalCase> cases = generate_cases(suite, haystack(), count_words);
  EXPECT_NO_THROW(find_case(cases, "multi-key-200-d0.50"));
  EXPECT_THROW(find_case(cases, "multi-value-200"), Error);
  // Lengths, samples and kinds added elsewhere leave a case as it was.
  const std::vector<EvalCase> all = generate_cases(ruler_suite(), haystack(), count_words);
  Suite one = ruler_suite();
  one.kinds = {CaseKind::variable_tracking};
  one.samples = 1;
  const std::vector<EvalCase> alone = generate_cases(one, haystack(), count_words);
  for (const char* id : {"variable-tracking-100", "variable-tracking-200"}) {
    EXPECT_EQ(find_case(alone, id).context, find_case(all, id).context) << id;
    EXPECT_EQ(find_case(alone, id).question, find_case(all, id).question) << id;
  }
  EXPECT_EQ(find_case(cases, "common-words-100").context,
            find_case(all, "common-words-100").context);
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
