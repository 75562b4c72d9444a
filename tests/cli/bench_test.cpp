#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
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

  // The mix 0.1/0.3/0.6 of FP16, INT4 and INT2 at 16, 4 + 1 and 2 + 1 bits an element (an FP16
  // scale and zero per group of 32): 16 / (1.6 + 1.5 + 1.8) = 3.27, give or take the rounding
  // of 32 chunks to the fractions.
  const auto mixed_bytes = bench.at("mixed").at("bytes").get<double>();
  const auto fp16_bytes = bench.at("fp16").at("bytes").get<double>();
  EXPECT_NEAR(fp16_bytes / mixed_bytes, 16.0 / 4.9, 0.25);
  EXPECT_EQ(fp16_bytes, 1024.0 * 2 * 64 * 2 * 2);  // K and V in FP16, 2 heads x 64, one layer
}

// --simd runs the kernels on another SIMD target and the JSON names it (SCALAR: every x86-64
// build has that fallback, whatever COCKTAIL_CPU_SIMD_TARGETS says; an Arm build has NEON). A
// target name Highway does not have fails naming this CPU's.
#if defined(__aarch64__)
constexpr const char* kPortableTarget = "NEON";
#else
constexpr const char* kPortableTarget = "SCALAR";
#endif

TEST(CliBench, AttentionRunsOnTheSimdTargetItIsGiven) {
  const json bench =
      json_of(run_cli({"bench", "attention", "--context-tokens", "256", "--kv-heads", "1",
                       "--head-dim", "64", "--repeat", "1", "--simd", kPortableTarget, "--json"}));
  ASSERT_TRUE(bench.is_object());
  EXPECT_EQ(bench.at("backend_detail"),
            std::string("runs on this CPU with SIMD target ") + kPortableTarget);

  const CliResult unknown = run_cli({"bench", "attention", "--simd", "AVX9"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, ::testing::HasSubstr("--set backend.cpu.simd = \"AVX9\": not a SIMD "
                                                "target Highway has for this architecture"));
  EXPECT_THAT(unknown.err, ::testing::HasSubstr(kPortableTarget));
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
    // Each part is timed; "other" is the step's time beyond them, so it is positive only when
    // the parts' timers do not overlap.
    for (const json* cache : {&fp16, &configured}) {
      const json& parts = cache->at("tpot_parts_s");
      for (const char* part : {"matmul", "attention", "logits", "other"}) {
        EXPECT_GT(parts.at(part).get<double>(), 0.0) << part;
      }
    }
    ratios.push_back(run.at("tpot_ratio").get<double>());
  }
  std::sort(ratios.begin(), ratios.end());
  EXPECT_DOUBLE_EQ(bench.at("tpot_ratio").get<double>(), ratios[1]);
  EXPECT_DOUBLE_EQ(bench.at("configured").at("tpot_s").get<double>() /
                       bench.at("fp16").at("tpot_s").get<double>(),
                   ratios[1]);
}

// The model cache folder for one test: $COCKTAIL_MODEL_DIR while it lives.
class ModelDirForTest {
 public:
  explicit ModelDirForTest(const std::filesystem::path& dir) {
    if (const char* before = getenv("COCKTAIL_MODEL_DIR")) before_ = before;
    setenv("COCKTAIL_MODEL_DIR", dir.c_str(), 1);
  }
  ~ModelDirForTest() {
    if (before_) {
      setenv("COCKTAIL_MODEL_DIR", before_->c_str(), 1);
    } else {
      unsetenv("COCKTAIL_MODEL_DIR");
    }
  }
  ModelDirForTest(const ModelDirForTest&) = delete;
  ModelDirForTest& operator=(const ModelDirForTest&) = delete;

 private:
  std::optional<std::string> before_;
};

// No model to fetch: the tiny synthetic one is written into the model cache on first use, and
// found there by the second run.
TEST(CliBench, DecodeRunsOnASyntheticModel) {
  const ScratchDir scratch;
  const ModelDirForTest model_dir(scratch.path("models"));
  const std::vector<std::string> args = {
      "bench", "decode",       "--synthetic", "tiny",  "--context-tokens",
      "300",   "--gen-tokens", "3",           "--json"};
  const CliResult first = run_cli(args);
  EXPECT_THAT(first.err, ::testing::HasSubstr("writing the synthetic tiny model"));
  const CliResult second = run_cli(args);
  EXPECT_EQ(second.err.find("writing"), std::string::npos) << second.err;
  for (const CliResult* run : {&first, &second}) {
    expect_no_sanitizer_report(*run);
    const json bench = json_of(*run);
    ASSERT_TRUE(bench.is_object());
    EXPECT_EQ(bench.at("synthetic"), "tiny");
    EXPECT_EQ(bench.at("model"), "synthetic-tiny.gguf");
    EXPECT_EQ(bench.at("context_tokens"), 300);
    for (const char* cache : {"fp16", "configured"}) {
      const double tpot = bench.at(cache).at("tpot_s").get<double>();
      EXPECT_TRUE(std::isfinite(tpot) && tpot > 0.0) << cache;
      EXPECT_EQ(bench.at(cache).at("generated_tokens"), 3) << cache;
    }
    EXPECT_LT(bench.at("configured").at("kv_bytes").get<double>(),
              bench.at("fp16").at("kv_bytes").get<double>());
  }
  EXPECT_TRUE(std::filesystem::is_regular_file(scratch.path("models") / "synthetic-tiny.gguf"));
}

}  // namespace
}  // namespace cocktail::testing
