#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "run_cli.hpp"

// `cocktail run` with the real model (scripts/fetch-models puts it in the model cache).
namespace cocktail::testing {
namespace {

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
  double shares = 0.0;
  for (const auto& [precision, share] : stats.at("token_share").items()) {
    EXPECT_GT(share.get<double>(), 0.0) << precision;
    shares += share.get<double>();
  }
  EXPECT_NEAR(shares, 1.0, 1e-9);
  EXPECT_GT(stats.at("token_share").value("int2", 0.0) + stats.at("token_share").value("int4", 0.0),
            0.5);
  for (const char* key : {"prefill_s", "plan_s", "tpot_s", "peak_rss_bytes"}) {
    EXPECT_GT(stats.at(key).get<double>(), 0.0) << key;
  }
}

// Bad inputs to `cocktail run` are in the catalogue of bad_input_test.cpp.

}  // namespace
}  // namespace cocktail::testing
