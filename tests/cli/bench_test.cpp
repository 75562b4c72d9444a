#include <gtest/gtest.h>

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

}  // namespace
}  // namespace cocktail::testing
