#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "run_cli.hpp"

// `cocktail eval` with the real model on one small case of its own: the reports are complete,
// the FP16 cache agrees with itself, and quantized caches pay in KL divergence for their bytes.
namespace cocktail::testing {
namespace {

using ::testing::HasSubstr;

TEST(EvalCommand, RunsEveryMethodOnACustomCaseAndWritesTheReport) {
  ScratchDir dir;
  const std::string context =
      "The lighthouse keeper kept a logbook. Storms came in the autumn and the lamp was cleaned "
      "every morning. The secret code for the copper gate is 5821. Ships passed at night and "
      "the keeper counted them. In winter the path froze and supplies came by boat.";
  dir.write("cases.jsonl",
            nlohmann::json{{"id", "gate"},
                           {"question", "What is the secret code for the copper gate?"},
                           {"expected", "5821"},
                           {"context", context}}
                    .dump() +
                "\n");
  const std::string suite = dir.write("suite.toml", "kinds = []\ncases = \"cases.jsonl\"\n");
  const std::string json = dir.path("results.json").string();
  const std::string report = dir.path("report").string();
  const CliResult r =
      run_cli({"eval", "--config", shipped_config("paper.toml"), "--suite", suite, "--methods",
               "fp16,int2,cocktail@attention,budget-4@bm25,int2+ls", "--max-tokens", "12", "--json",
               json, "--report", report, "--set", "engine.scorer=bm25", "--set",
               "planner.cocktail.chunk_size=8", "--set", "planner.budget.chunk_size=8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("| cocktail@attention |"));
  const nlohmann::json out = nlohmann::json::parse(read_file(json));
  ASSERT_EQ(out.at("methods").size(), 5u);
  const nlohmann::json& fp16 = out["methods"][0];
  EXPECT_EQ(fp16.at("name"), "fp16");
  EXPECT_NEAR(fp16.at("kld").get<double>(), 0.0, 1e-6);
  EXPECT_EQ(fp16.at("top1").get<double>(), 1.0);
  EXPECT_EQ(fp16.at("avg_code_bits").get<double>(), 16.0);
  EXPECT_EQ(fp16.at("avg_bits").get<double>(), 16.0);
  EXPECT_EQ(fp16.at("token_share"), nlohmann::json({{"fp16", 1.0}}));
  const nlohmann::json& int2 = out["methods"][1];
  EXPECT_LT(int2.at("kv_bytes_ratio").get<double>(), 0.5);
  // Scales and zeros cost bits beyond the codes.
  EXPECT_GT(int2.at("avg_bits").get<double>(), int2.at("avg_code_bits").get<double>());
  // The uniform planner's full chunks of 32 tokens go to INT2; only a remainder of fewer than 32
  // tokens stays FP16.
  const nlohmann::json& point = int2.at("cases").at(0).at("operating_point");
  const double int2_tokens = 32.0 * point.at("chunks_per_precision").at("int2").get<double>();
  const double int2_share = point.at("token_share").at("int2").get<double>();
  EXPECT_LE(int2_share, 1.0);
  EXPECT_GT(int2_share, int2_tokens / (int2_tokens + 32.0));
  EXPECT_EQ(int2.at("token_share"), point.at("token_share"));  // the mean over its one case
  EXPECT_GT(int2.at("kld").get<double>(), fp16.at("kld").get<double>());
  const nlohmann::json& budget = out["methods"][3];
  EXPECT_LE(budget.at("avg_code_bits").get<double>(), 4.0 + 1e-9);
  // +ls changes the codes, not the bytes.
  const nlohmann::json& int2_ls = out["methods"][4];
  EXPECT_EQ(int2_ls.at("name"), "int2+ls");
  EXPECT_EQ(int2_ls.at("kv_bytes_ratio"), int2.at("kv_bytes_ratio"));
  EXPECT_NE(int2_ls.at("kld").get<double>(), int2.at("kld").get<double>());
  for (const nlohmann::json& method : out["methods"]) {
    const nlohmann::json& c = method.at("cases").at(0);
    EXPECT_EQ(c.at("id"), "gate");
    EXPECT_FALSE(c.at("answer").get<std::string>().empty()) << method.at("name");
    EXPECT_GE(c.at("plan_s").get<double>(), 0.0);
  }
  for (const char* file :
       {"results.md", "results.json", "accuracy-vs-bits.svg", "kld-vs-bits.svg"}) {
    EXPECT_FALSE(read_file(report + "/" + file).empty()) << file;
  }
}

TEST(EvalCommand, UnknownMethodIsAnErrorListingTheKnownOnes) {
  const CliResult r = run_cli({"eval", "--methods", "fp16,int3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("unknown evaluation method 'int3'; known:"));
  const CliResult suffixed = run_cli({"eval", "--methods", "int3+ls"});
  EXPECT_EQ(suffixed.exit_code, 1);
  EXPECT_THAT(suffixed.err, HasSubstr("unknown evaluation method 'int3+ls'"));
  EXPECT_THAT(suffixed.err, HasSubstr("optionally followed by +ls"));
}

}  // namespace
}  // namespace cocktail::testing
