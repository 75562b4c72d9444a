#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "run_cli.hpp"

// `cocktail run` with the real model (scripts/fetch-models puts it in the model cache).
namespace cocktail::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

CliResult run_with(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run", "--config", shipped_config("default.toml")};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}

// The main job: the built-in document holds the answer, and the model finds it through the
// mixed cache.
TEST(RunCommand, AnswersTheSampleQuestionOnTheCocktailCache) {
  const nlohmann::json out = json_of(run_with({"--json", "--max-tokens", "24"}));
  EXPECT_THAT(out.at("answer").get<std::string>(), HasSubstr("4471"));
  const nlohmann::json& stats = out.at("stats");
  EXPECT_GT(stats.at("context_tokens").get<int>(), 800);
  EXPECT_LT(stats.at("kv_bytes").get<double>(), 0.5 * stats.at("fp16_kv_bytes").get<double>());
  EXPECT_LT(stats.at("avg_bits").get<double>(), 8.0);
  for (const char* key : {"prefill_s", "plan_s", "tpot_s", "peak_rss_bytes"}) {
    EXPECT_GT(stats.at(key).get<double>(), 0.0) << key;
  }
}

TEST(RunCommand, MissingModelNamesTheFileAndTheFetchScript) {
  const CliResult r = run_with({"--set", "model.path=/nonexistent/model.gguf"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr("/nonexistent/model.gguf not found"),
                           HasSubstr("scripts/fetch-models")));
}

TEST(RunCommand, TruncatedModelIsAnErrorNamingTheField) {
  ScratchDir dir;
  const std::string path = dir.write("cut.gguf", std::string("GGUF\x03\0\0\0", 8));
  const CliResult r = run_with({"--set", "model.path=" + path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr(path), HasSubstr("tensor count"), HasSubstr("offset")));
}

TEST(RunCommand, EmptyQuestionIsAnError) {
  const CliResult r = run_with({"--context", "Some text.", "--question", "  "});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("the question is empty"));
}

TEST(RunCommand, AbsurdMaxTokensIsAnError) {
  const CliResult r = run_with({"--max-tokens", "100000"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr("max new tokens = 100000 is out of range"),
                           HasSubstr("context length is 8192")));
}

TEST(RunCommand, ContextLongerThanTheModelIsAnErrorUnlessTruncated) {
  std::string context;
  for (int i = 0; i < 2500; ++i) context += "alpha beta gamma delta ";
  ScratchDir dir;
  const CliResult r = run_with(
      {"--context-file", dir.write("long.txt", context), "--question", "What comes after beta?"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr("more than the model's context length of 8192"),
                           HasSubstr("--truncate-context")));
}

}  // namespace
}  // namespace cocktail::testing
