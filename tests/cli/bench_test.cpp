#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "run_cli.hpp"

namespace cocktail::testing {
namespace {

using nlohmann::json;

// Timings on shared machines are noise, so only the structure and the byte counts are checked.
TEST(CliBench, AttentionJsonComparesTheMixedCacheWithFp16) {
  const json bench =
      json_of(run_cli({"bench", "attention", "--context-tokens", "1024", "--kv-heads", "2",
                       "--head-dim", "64", "--repeat", "2", "--json"}));
  ASSERT_TRUE(bench.is_object());
  EXPECT_EQ(bench.at("context_tokens"), 1024);
  EXPECT_TRUE(bench.at("bandwidth_fraction").is_number());
  EXPECT_TRUE(bench.at("speedup_vs_fp16").is_number());

  const auto mixed_bytes = bench.at("mixed").at("bytes").get<double>();
  const auto fp16_bytes = bench.at("fp16").at("bytes").get<double>();
  EXPECT_LT(mixed_bytes, fp16_bytes);
  EXPECT_GT(bench.at("byte_ratio_vs_fp16").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(bench.at("byte_ratio_vs_fp16").get<double>(), fp16_bytes / mixed_bytes);
}

// With the real model (scripts/fetch-models): rounds of the FP16 and the configured cache
// decoding in turn, and the round with the median TPOT ratio reported at the top.
TEST(CliBench, DecodeJsonReportsEveryRoundAndTheMedianOne) {
  const json bench =
      json_of(run_cli({"bench", "decode", "--config", shipped_config("default.toml"),
                       "--context-tokens", "200", "--gen-tokens", "2", "--repeat", "3", "--json"}));
  ASSERT_TRUE(bench.is_object());
  const json& runs = bench.at("runs");
  ASSERT_EQ(runs.size(), 3u);
  std::vector<double> ratios;
  for (const json& run : runs) {
    const json& fp16 = run.at("fp16");
    const json& configured = run.at("configured");
    EXPECT_EQ(fp16.at("avg_bits").get<double>(), 16.0);
    EXPECT_LT(configured.at("kv_bytes").get<double>(), fp16.at("kv_bytes").get<double>());
    EXPECT_DOUBLE_EQ(run.at("tpot_ratio").get<double>(),
                     configured.at("tpot_s").get<double>() / fp16.at("tpot_s").get<double>());
    for (const json* cache : {&fp16, &configured}) {
      const json& parts = cache->at("tpot_parts_s");
      double sum = 0.0;
      for (const char* part : {"matmul", "attention", "logits", "other"}) {
        EXPECT_GT(parts.at(part).get<double>(), 0.0) << part;
        sum += parts.at(part).get<double>();
      }
      EXPECT_NEAR(sum, cache->at("tpot_s").get<double>(), 1e-9);
    }
    ratios.push_back(run.at("tpot_ratio").get<double>());
  }
  std::sort(ratios.begin(), ratios.end());
  EXPECT_DOUBLE_EQ(bench.at("tpot_ratio").get<double>(), ratios[1]);
  EXPECT_DOUBLE_EQ(bench.at("configured").at("tpot_s").get<double>() /
                       bench.at("fp16").at("tpot_s").get<double>(),
                   ratios[1]);
}

}  // namespace
}  // namespace cocktail::testing
