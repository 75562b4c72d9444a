#include "cocktail/eval/suite.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "cocktail/error.hpp"
#include "support/error_of.hpp"

namespace cocktail::eval {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kFile = "suites/long.toml";

std::string suite_error(const std::string& text) {
  return testing::error_of<ConfigError>([&] { parse_suite(text, kFile); });
}

TEST(SuiteTest, BuiltinIsTheDocumentedDefault) {
  const Suite suite = builtin_suite();
  EXPECT_EQ(suite.source, "builtin");
  EXPECT_THAT(suite.lengths, ElementsAre(1024, 2048, 4096, 8192));
  EXPECT_THAT(suite.depths, ElementsAre(0.0, 0.25, 0.5, 0.75, 1.0));
  EXPECT_THAT(suite.kinds, ElementsAre(CaseKind::niah, CaseKind::multi_needle, CaseKind::passkey));
  EXPECT_EQ(suite.needles, 3);
  EXPECT_EQ(suite.passkey_filler, PasskeyFiller::classic);
  EXPECT_EQ(suite.seed, 1u);
  EXPECT_FALSE(suite.haystack);
  EXPECT_FALSE(suite.cases);
  EXPECT_TRUE(suite.kind_lengths.empty());
  EXPECT_EQ(suite.samples, 1);
  EXPECT_EQ(suite.common_words, 10);
}

TEST(SuiteTest, ReadsEveryKeyAndResolvesPathsAgainstTheFile) {
  const Suite suite = parse_suite(R"(
haystack = "../data/essays"
lengths = [512, 4096]
depths = [0, 0.5, 1]
kinds = ["passkey", "niah"]
needles = 4
passkey_filler = "haystack"
seed = 99
cases = "mine.jsonl"
needle_file = "needles.jsonl"
samples = 3
common_words = 5

[kind_lengths]
passkey = [512, 16384]
)",
                                  kFile);
  EXPECT_EQ(suite.source, kFile);
  EXPECT_EQ(suite.haystack, std::filesystem::path("data/essays"));
  EXPECT_EQ(suite.cases, std::filesystem::path("suites/mine.jsonl"));
  EXPECT_EQ(suite.needle_file, std::filesystem::path("suites/needles.jsonl"));
  EXPECT_THAT(suite.lengths, ElementsAre(512, 4096));
  EXPECT_THAT(suite.depths, ElementsAre(0.0, 0.5, 1.0));
  EXPECT_THAT(suite.kinds, ElementsAre(CaseKind::passkey, CaseKind::niah));
  EXPECT_EQ(suite.needles, 4);
  EXPECT_EQ(suite.passkey_filler, PasskeyFiller::haystack);
  EXPECT_EQ(suite.seed, 99u);
  EXPECT_EQ(suite.samples, 3);
  EXPECT_EQ(suite.common_words, 5);
  EXPECT_THAT(suite.lengths_of(CaseKind::passkey), ElementsAre(512, 16384));
  EXPECT_THAT(suite.lengths_of(CaseKind::niah), ElementsAre(512, 4096));
}

TEST(SuiteTest, ReadsTheRulerKinds) {
  const Suite suite = parse_suite(
      "kinds = [\"niah-number-key\", \"multi-key\", \"multi-value\", \"variable-tracking\", "
      "\"common-words\"]\n",
      kFile);
  EXPECT_THAT(suite.kinds,
              ElementsAre(CaseKind::niah_number_key, CaseKind::multi_key, CaseKind::multi_value,
                          CaseKind::variable_tracking, CaseKind::common_words));
  EXPECT_TRUE(suite.needs_haystack());
}

TEST(SuiteTest, BadKindLengthsAreErrors) {
  EXPECT_THAT(suite_error("kinds = [\"niah\", \"multi-key\"]\n[kind_lengths]\npasskey = [4096]\n"),
              HasSubstr("long.toml:3: kind_lengths.passkey is not a kind the suite generates; "
                        "allowed: a kind from `kinds` (niah, multi-key)"));
  EXPECT_THAT(suite_error("[kind_lengths]\nnia = [4096]\n"),
              HasSubstr("long.toml:2: kind_lengths.nia is not a kind the suite generates"));
  EXPECT_THAT(suite_error("[kind_lengths]\nniah = [10]\n"),
              HasSubstr("long.toml:2: kind_lengths.niah = [ 10 ] has the element 10; allowed: a "
                        "non-empty array of distinct integers from 64 to 1048576"));
  EXPECT_THAT(suite_error("kind_lengths = 5\n"),
              HasSubstr("long.toml:1: kind_lengths = 5 is not a table; allowed: a table of kind "
                        "= [lengths]"));
}

TEST(SuiteTest, MissingKeysKeepTheBuiltinValues) {
  const Suite suite = parse_suite("seed = 7\n", kFile);
  EXPECT_EQ(suite.seed, 7u);
  EXPECT_EQ(suite.lengths, builtin_suite().lengths);
  EXPECT_EQ(suite.kinds, builtin_suite().kinds);
}

TEST(SuiteTest, UnknownKeyNamesFileLineAndTheKnownKeys) {
  const std::string message = suite_error("seed = 1\nlenghts = [1024]\n");
  EXPECT_THAT(message, HasSubstr("suites/long.toml:2: lenghts is an unknown key"));
  EXPECT_THAT(message, HasSubstr("known keys: cases, common_words, depths, haystack, "
                                 "kind_lengths, kinds, lengths, needle_file, needles, "
                                 "passkey_filler, samples, seed"));
}

TEST(SuiteTest, WrittenNeedlesNeedNiahCases) {
  EXPECT_THAT(suite_error("kinds = [\"passkey\"]\nneedle_file = \"n.jsonl\"\n"),
              HasSubstr("needle_file is given but `kinds` has no niah"));
  EXPECT_THAT(suite_error("needle_file = \"\"\n"), HasSubstr("needle_file = \"\" is empty"));
}

TEST(SuiteTest, BadLengthsAreErrors) {
  EXPECT_THAT(suite_error("\nlengths = [1024, \"x\"]"),
              HasSubstr("long.toml:2: lengths = [ 1024, 'x' ] has the element 'x'"));
  EXPECT_THAT(suite_error("lengths = [10]"), HasSubstr("integers from 64 to 1048576"));
  EXPECT_THAT(suite_error("lengths = [1024, 1024]"), HasSubstr("has the element 1024"));
  EXPECT_THAT(suite_error("lengths = [1024.5]"), HasSubstr("has the element 1024.5"));
  EXPECT_THAT(suite_error("lengths = []"), HasSubstr("lengths = [] is not allowed"));
}

TEST(SuiteTest, BadDepthsAreErrors) {
  EXPECT_THAT(suite_error("depths = [0.5, 1.5]"), HasSubstr("has the element 1.5"));
  EXPECT_THAT(suite_error("depths = 0.5"),
              HasSubstr("depths = 0.5 is not allowed: a non-empty array of distinct numbers"));
}

TEST(SuiteTest, BadKindsAreErrors) {
  EXPECT_THAT(suite_error("kinds = [\"niah\", \"custom\"]"),
              HasSubstr("kinds has \"custom\"; allowed: distinct names from niah, "
                        "niah-number-key, multi-key, multi-value, multi-needle, "
                        "variable-tracking, common-words, passkey (custom cases"));
  EXPECT_THAT(suite_error("kinds = [\"niah\", \"niah\"]"), HasSubstr("kinds has \"niah\""));
  EXPECT_THAT(suite_error("kinds = []"), HasSubstr("kinds is empty and no `cases` file"));
  EXPECT_TRUE(parse_suite("kinds = []\ncases = \"c.jsonl\"", kFile).kinds.empty());
}

TEST(SuiteTest, BadScalarsUseTheConfigWording) {
  EXPECT_THAT(suite_error("needles = 1"),
              HasSubstr("long.toml:1: needles = 1 is out of range; allowed: 2 to 16"));
  EXPECT_THAT(suite_error("passkey_filler = \"sand\""),
              HasSubstr("passkey_filler = \"sand\" is not allowed; allowed: classic, haystack"));
  EXPECT_THAT(suite_error("seed = \"x\""), HasSubstr("seed = \"x\" has the wrong type"));
  EXPECT_THAT(suite_error("samples = 0"),
              HasSubstr("samples = 0 is out of range; allowed: 1 to 100"));
  EXPECT_THAT(suite_error("common_words = 51"),
              HasSubstr("common_words = 51 is out of range; allowed: 1 to 50"));
  EXPECT_THAT(suite_error("haystack = \"\""), HasSubstr("haystack = \"\" is empty"));
  EXPECT_THAT(suite_error("seed = {a = 1}"), HasSubstr("long.toml:1: seed = { a = 1 } has the"));
}

TEST(SuiteTest, SyntaxErrorsNameTheLine) {
  EXPECT_THAT(suite_error("seed = 1\nlengths = [1024\n"), HasSubstr("long.toml:"));
  EXPECT_THAT(suite_error("seed = 1\nlengths = [1024\n"), HasSubstr("syntax error"));
}

TEST(SuiteTest, AMissingFileIsAConfigError) {
  const std::string message =
      testing::error_of<ConfigError>([] { load_suite("no/such/suite.toml"); });
  EXPECT_THAT(message, HasSubstr("cannot read the suite file no/such/suite.toml"));
}

TEST(SuiteTest, OnlyHaystackKindsNeedAHaystack) {
  EXPECT_TRUE(builtin_suite().needs_haystack());
  Suite passkey = builtin_suite();
  passkey.kinds = {CaseKind::passkey};
  EXPECT_FALSE(passkey.needs_haystack());
  passkey.passkey_filler = PasskeyFiller::haystack;
  EXPECT_TRUE(passkey.needs_haystack());
}

// The cases a suite generates of `kind` at `length`.
std::size_t cases_of(const Suite& suite, CaseKind kind, std::int64_t length) {
  const std::vector<std::int64_t>& lengths = suite.lengths_of(kind);
  if (std::find(lengths.begin(), lengths.end(), length) == lengths.end()) return 0;
  return placed_by_depth(kind) ? suite.depths.size() : std::size_t(suite.samples);
}

TEST(SuiteTest, TheShippedRulerSuiteHasTheCasesIssue28AsksFor) {
  const Suite suite =
      load_suite(std::filesystem::path(COCKTAIL_SOURCE_DIR) / "bench/eval/ruler.toml");
  std::size_t total = 0, at_16k = 0;
  for (CaseKind kind : suite.kinds) {
    for (std::int64_t length : {4096, 8192, 16384}) {
      const std::size_t n = cases_of(suite, kind, length);
      if (length < 16384) {
        EXPECT_GE(n, 2u) << to_string(kind) << " at " << length;
      }
      total += n;
      at_16k += length == 16384 ? n : 0;
    }
  }
  EXPECT_EQ(suite.kinds.size(), 7u);
  EXPECT_EQ(total, 60u);
  EXPECT_EQ(at_16k, 14u);
  const Suite quick =
      load_suite(std::filesystem::path(COCKTAIL_SOURCE_DIR) / "bench/eval/ruler-quick.toml");
  EXPECT_EQ(quick.kinds, suite.kinds);
  EXPECT_THAT(quick.lengths, ElementsAre(4096));
}

// SmolLM2's variant: the same cases but 8,000 tokens for 8K and no 16K, so that every context
// fits its window of 8,192 tokens with the prompt and a 64-token answer.
TEST(SuiteTest, TheSmolLm2RulerSuiteIsTheRulerSuiteInsideItsWindow) {
  const auto shipped = [](const char* name) {
    return load_suite(std::filesystem::path(COCKTAIL_SOURCE_DIR) / "bench/eval" / name);
  };
  const Suite ruler = shipped("ruler.toml");
  const Suite smollm2 = shipped("ruler-smollm2.toml");
  EXPECT_EQ(smollm2.kinds, ruler.kinds);
  EXPECT_EQ(smollm2.depths, ruler.depths);
  EXPECT_EQ(smollm2.samples, ruler.samples);
  EXPECT_EQ(smollm2.needles, ruler.needles);
  EXPECT_EQ(smollm2.common_words, ruler.common_words);
  EXPECT_EQ(smollm2.seed, ruler.seed);
  std::size_t total = 0;
  for (CaseKind kind : smollm2.kinds) {
    EXPECT_THAT(smollm2.lengths_of(kind), ElementsAre(4096, 8000)) << to_string(kind);
    total += cases_of(smollm2, kind, 4096) + cases_of(smollm2, kind, 8000);
  }
  EXPECT_EQ(total, 46u);
}

}  // namespace
}  // namespace cocktail::eval
