#include "cocktail/eval/case_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cocktail/error.hpp"
#include "support/error_of.hpp"

namespace cocktail::eval {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::filesystem::path kData = COCKTAIL_EVAL_TEST_DATA;

std::string jsonl_error(const std::string& text) {
  return testing::error_of<Error>([&] { parse_cases_jsonl(text, "x.jsonl", kData / "cases"); });
}

TEST(CaseFileTest, ReadsInlineAndFileContexts) {
  const std::vector<EvalCase> cases = load_cases_jsonl(kData / "cases" / "cases.jsonl");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].id, "keeper");
  EXPECT_EQ(cases[0].kind, CaseKind::custom);
  EXPECT_EQ(cases[0].question, "Who kept the lighthouse?");
  EXPECT_THAT(cases[0].expected, ElementsAre("Ada Lind", "Lind"));
  EXPECT_THAT(cases[0].context, ::testing::StartsWith("The lighthouse on the northern cape"));
  EXPECT_THAT(cases[0].context, HasSubstr("one hundred and twelve steps every evening"));
  EXPECT_EQ(cases[0].target_tokens, 0);
  EXPECT_TRUE(cases[0].needles.empty());
  EXPECT_EQ(cases[1].id, "steps");
  EXPECT_EQ(cases[1].kind, CaseKind::niah);
  EXPECT_THAT(cases[1].expected, ElementsAre("one hundred and twelve"));
  EXPECT_EQ(cases[1].context, "It had one hundred and twelve steps.");
}

TEST(CaseFileTest, AcceptsWindowsLineEnds) {
  const auto cases = parse_cases_jsonl(
      "{\"id\": \"a\", \"question\": \"q\", \"expected\": \"e\", \"context\": \"c\"}\r\n", "x",
      kData);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].context, "c");
}

TEST(CaseFileTest, SyntaxErrorsNameTheLine) {
  const std::string good = R"({"id": "a", "question": "q", "expected": "e", "context": "c"})";
  EXPECT_THAT(jsonl_error(good + "\n{\"id\": \n"), HasSubstr("x.jsonl:2: is not valid JSON"));
  EXPECT_THAT(jsonl_error("[1, 2]"), HasSubstr("x.jsonl:1: is not a JSON object"));
  EXPECT_THAT(jsonl_error("\n\n"), HasSubstr("x.jsonl: has no cases"));
}

TEST(CaseFileTest, KeysAreChecked) {
  EXPECT_THAT(jsonl_error(R"({"question": "q", "expected": "e", "context": "c"})"),
              HasSubstr("x.jsonl:1: id is missing"));
  EXPECT_THAT(jsonl_error(R"({"id": "a", "question": "q", "answer": "e", "context": "c"})"),
              HasSubstr("unknown key answer; known keys: context, context_file, expected, id, "
                        "kind, question"));
  EXPECT_THAT(jsonl_error(R"({"id": "a", "question": "", "expected": "e", "context": "c"})"),
              HasSubstr("question = \"\" is not allowed; allowed: a non-empty string"));
  EXPECT_THAT(
      jsonl_error(R"({"id": "a", "question": "q", "expected": "e", "context": "c", "kind": "x"})"),
      HasSubstr("kind = \"x\" is not allowed; allowed: niah, niah-number-key, multi-key, "
                "multi-value, multi-needle, variable-tracking, common-words, passkey, custom"));
}

TEST(CaseFileTest, ExpectedIsAStringOrAListOfStrings) {
  EXPECT_THAT(jsonl_error(R"({"id": "a", "question": "q", "expected": 5, "context": "c"})"),
              HasSubstr("expected = 5 is not allowed: a non-empty string or array"));
  EXPECT_THAT(jsonl_error(R"({"id": "a", "question": "q", "expected": [], "context": "c"})"),
              HasSubstr("expected = [] is not"));
  EXPECT_THAT(jsonl_error(R"({"id": "a", "question": "q", "expected": ["e", 3], "context": "c"})"),
              HasSubstr("expected = [\"e\",3] has an element 3"));
}

TEST(CaseFileTest, ExactlyOneContext) {
  EXPECT_THAT(jsonl_error(R"({"id": "a", "question": "q", "expected": "e"})"),
              HasSubstr("has neither context nor context_file"));
  EXPECT_THAT(
      jsonl_error(
          R"({"id": "a", "question": "q", "expected": "e", "context": "c", "context_file": "f"})"),
      HasSubstr("has both context and context_file"));
  EXPECT_THAT(
      jsonl_error(R"({"id": "a", "question": "q", "expected": "e", "context_file": "nope.txt"})"),
      HasSubstr("x.jsonl:1: context_file = \"nope.txt\": cannot read the context file"));
}

// Found by fuzz/jsonl_fuzzer: a context nested 100,000 deep overflowed the stack while the
// error message dumped it. Nesting is now refused while parsing, naming the line.
TEST(CaseFileTest, RefusesDeepNestingWithoutRecursingIntoIt) {
  const std::string good = R"({"id": "a", "question": "q", "expected": "e", "context": "c"})";
  const std::size_t depth = 100000;
  const std::string deep = R"({"id": "b", "question": "q", "expected": "e", "context": )" +
                           std::string(depth, '[') + std::string(depth, ']') + "}";
  EXPECT_THAT(jsonl_error(good + "\n" + deep),
              HasSubstr("x.jsonl:2: nests arrays and objects more than 16 deep"));
}

// Found by fuzz/jsonl_fuzzer: a number beyond a double's range escaped as nlohmann's
// out_of_range exception instead of an error naming the line.
TEST(CaseFileTest, NumberOutOfRangeIsInvalidJson) {
  EXPECT_THAT(jsonl_error(R"({"id": "a", "question": "q", "expected": [5e30300], "context": "c"})"),
              HasSubstr("x.jsonl:1: is not valid JSON: [json.exception.out_of_range.406]"));
}

// A bad value too big or too deep to show whole is cut, not dumped.
TEST(CaseFileTest, ShowsOnlyTheStartOfABadValue) {
  const std::string nested = R"({"id": "a", "question": "q", "expected": "e", "context": )"
                             R"({"k": [[[["x"]]], 2]}})";
  EXPECT_THAT(jsonl_error(nested), HasSubstr(R"(context = {"k":[[[...]],2]} has the wrong type)"));
  std::string many = "\"e\"";
  for (int i = 0; i < 100; ++i) many += ", 1";
  const std::string long_answer =
      R"({"id": "a", "question": "q", "context": "c", "expected": [)" + many + "]}";
  EXPECT_THAT(jsonl_error(long_answer),
              HasSubstr(R"(expected = ["e",1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,...)"
                        " has an element 1;"));
}

TEST(CaseFileTest, IdsAreUnique) {
  const std::string a = R"({"id": "a", "question": "q", "expected": "e", "context": "c"})";
  const std::string b = R"({"id": "b", "question": "q", "expected": "e", "context": "c"})";
  EXPECT_THAT(jsonl_error(a + "\n" + b + "\n" + a),
              HasSubstr("x.jsonl:3: id = \"a\" is used twice (first on line 1)"));
}

std::string needles_error(const std::string& text) {
  return testing::error_of<Error>([&] { parse_needles_jsonl(text, "n.jsonl"); });
}

TEST(NeedleFileTest, ReadsStatementQuestionAndAnswerWithTheirLines) {
  const std::vector<WrittenNeedle> needles = load_needles_jsonl(kData / "cases" / "needles.jsonl");
  ASSERT_EQ(needles.size(), 2u);
  EXPECT_EQ(needles[0].statement, "The ferry across Lake Ombrel is called Quillhaven.");
  EXPECT_EQ(needles[0].question, "What is the ferry across Lake Ombrel called?");
  EXPECT_EQ(needles[0].answer, "Quillhaven");
  EXPECT_EQ(needles[0].line, 1);
  EXPECT_EQ(needles[1].answer, "417");
  EXPECT_EQ(needles[1].line, 3);  // after a blank line
}

TEST(NeedleFileTest, TheStatementHoldsTheAnswerAndTheQuestionDoesNot) {
  EXPECT_THAT(needles_error(R"({"statement": "It is 4170.", "question": "q", "answer": "417"})"),
              HasSubstr("n.jsonl:1: statement = \"It is 4170.\" does not hold the answer \"417\""));
  EXPECT_THAT(
      needles_error(R"({"statement": "It is 417.", "question": "Is it 417?", "answer": "417"})"),
      HasSubstr("question = \"Is it 417?\" gives the answer \"417\" away"));
}

TEST(NeedleFileTest, KeysAreChecked) {
  EXPECT_THAT(needles_error(R"({"statement": "It is 417.", "question": "q"})"),
              HasSubstr("n.jsonl:1: answer is missing"));
  EXPECT_THAT(needles_error(R"({"statement": "s", "question": "q", "answer": "s", "id": "a"})"),
              HasSubstr("unknown key id; known keys: answer, question, statement"));
  EXPECT_THAT(needles_error(R"({"statement": "s", "question": "q", "answer": 5})"),
              HasSubstr("answer = 5 is not allowed; allowed: a non-empty string"));
  EXPECT_THAT(needles_error("\n"), HasSubstr("n.jsonl: has no needles"));
}

}  // namespace
}  // namespace cocktail::eval
