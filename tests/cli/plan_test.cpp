#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace cocktail::testing {
namespace {

using nlohmann::json;

// What configs/paper.toml sets.
constexpr double kPaperAlpha = 0.6;
constexpr double kPaperBeta = 0.1;
constexpr std::int64_t kChunkSize = 32;

// `cocktail plan --json` with configs/paper.toml, the BM25 scorer (no encoder to load) and
// `extra` arguments.
json plan_json(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      "plan", "--json", "--config", shipped_config("paper.toml"), "--set", "engine.scorer=bm25"};
  args.insert(args.end(), extra.begin(), extra.end());
  return json_of(run_cli(args));
}

// The chunks tile the context: numbered in order, each starting where the previous one ended.
void expect_contiguous_chunks(const json& plan) {
  const json& chunks = plan.at("chunks");
  ASSERT_FALSE(chunks.empty());
  std::int64_t next = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].at("index"), i);
    EXPECT_EQ(chunks[i].at("first_token"), next);
    next += chunks[i].at("n_tokens").get<std::int64_t>();
  }
  EXPECT_EQ(plan.at("context_tokens"), next);
}

// Eq. 3 with the default tiers; the remainder chunk has no score and stays FP16.
std::string expected_precision(const json& chunk, double t_low, double t_high) {
  if (chunk.at("score").is_null()) return "fp16";
  const double score = chunk.at("score").get<double>();
  if (score > t_high) return "fp16";
  if (score < t_low) return "int2";
  return "int4";
}

// The thresholds follow from alpha, beta and the score range, and each chunk's tier from them.
void expect_tiers_follow_thresholds(const json& plan, double alpha, double beta) {
  std::vector<double> scores;
  for (const json& chunk : plan.at("chunks")) {
    if (!chunk.at("score").is_null()) scores.push_back(chunk.at("score").get<double>());
  }
  ASSERT_FALSE(scores.empty()) << "the context should hold at least one full chunk";
  const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
  const double t_low = plan.at("t_low").get<double>();
  const double t_high = plan.at("t_high").get<double>();
  EXPECT_NEAR(t_low, *lo + (*hi - *lo) * alpha, 1e-9);
  EXPECT_NEAR(t_high, *hi - (*hi - *lo) * beta, 1e-9);
  for (const json& chunk : plan.at("chunks")) {
    EXPECT_EQ(chunk.at("precision"), expected_precision(chunk, t_low, t_high)) << chunk;
  }
}

// A quantized cache is smaller than FP16.
void expect_smaller_than_fp16(const json& plan) {
  EXPECT_LT(plan.at("kv_bytes").get<double>(), plan.at("fp16_kv_bytes").get<double>());
}

// Tokens at each precision, summed from the chunk table.
std::map<std::string, double> tokens_by_precision(const json& plan) {
  std::map<std::string, double> tokens;
  for (const json& chunk : plan.at("chunks")) {
    tokens[chunk.at("precision").get<std::string>()] += chunk.at("n_tokens").get<double>();
  }
  return tokens;
}

void expect_cocktail_plan(const json& plan, double alpha, double beta) {
  ASSERT_TRUE(plan.is_object());
  EXPECT_DOUBLE_EQ(plan.at("alpha").get<double>(), alpha);
  EXPECT_DOUBLE_EQ(plan.at("beta").get<double>(), beta);
  expect_contiguous_chunks(plan);
  expect_tiers_follow_thresholds(plan, alpha, beta);
  expect_smaller_than_fp16(plan);
}

// Shelves of groceries and one sentence about a vault: long enough for several chunks, with one
// part that the query is about.
std::string inventory_context() {
  std::string text;
  for (int shelf = 0; shelf < 20; ++shelf) {
    text += "Shelf " + std::to_string(shelf) + " holds jars of plum jam, dried figs and biscuits. ";
    if (shelf == 12) text += "The vault code is seven four one one; the night porter keeps it. ";
  }
  return text;
}

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

std::size_t precisions_used(const json& plan) {
  const json& counts = plan.at("chunks_per_precision");
  return std::size_t(
      std::count_if(counts.begin(), counts.end(), [](const json& n) { return n.get<int>() > 0; }));
}

// The operating point: each precision's share of the tokens is what the chunk table holds, and
// the bits per element count the quantization groups' scales and zeros. An INT4 token with
// keys grouped per channel and values per token in groups of 32 costs 4 code bits plus an FP16
// scale and zero per 32 elements: 5 bits.
TEST(CliPlan, ReportsTheTokenSharesAndTheBitsWithScales) {
  const json plan = plan_json({"--set", "engine.planner=uniform"});
  const std::map<std::string, double> tokens = tokens_by_precision(plan);
  const double n = plan.at("context_tokens").get<double>();
  ASSERT_EQ(plan.at("token_share").size(), tokens.size());
  for (const auto& [precision, count] : tokens) {
    EXPECT_DOUBLE_EQ(plan.at("token_share").at(precision).get<double>(), count / n) << precision;
  }
  ASSERT_GT(tokens.at("int4"), 0.0);
  EXPECT_NEAR(plan.at("avg_bits").get<double>(),
              (5.0 * tokens.at("int4") + 16.0 * tokens.at("fp16")) / n, 1e-9);
  EXPECT_NEAR(plan.at("avg_code_bits").get<double>(),
              (4.0 * tokens.at("int4") + 16.0 * tokens.at("fp16")) / n, 1e-9);
}

TEST(CliPlan, SampleFollowsThePaperConfig) {
  expect_cocktail_plan(plan_json({}), kPaperAlpha, kPaperBeta);
}

TEST(CliPlan, InlineContextFollowsThePaperConfig) {
  const json plan =
      plan_json({"--context", inventory_context(), "--query", "What is the vault code?"});
  expect_cocktail_plan(plan, kPaperAlpha, kPaperBeta);
}

// Every form of valid UTF-8 passes the context check: two-, three- and four-byte sequences,
// next to the bytes around the ranges that are refused.
TEST(CliPlan, ContextInAnyScriptIsAccepted) {
  const json plan = plan_json({"--context",
                               "Caf\u00e9 na\u00efve \u2014 \u65e5\u672c\u8a9e "
                               "\ud55c\uad6d\uc5b4 \U0001F600 \U0010FFFF \uD7FF \uE000",
                               "--query", "\u65e5\u672c\u8a9e"});
  EXPECT_GT(plan.at("context_tokens").get<int>(), 0);
}

TEST(CliPlan, SetOverridesAlpha) {
  expect_cocktail_plan(plan_json({"--set", "planner.cocktail.alpha=0.3"}), 0.3, kPaperBeta);
}

TEST(CliPlan, UniformPlannerPutsEveryFullChunkInInt4) {
  const json plan = plan_json({"--set", "engine.planner=uniform"});
  expect_contiguous_chunks(plan);
  // The sample does not fill its last chunk, so both kinds of chunk are checked.
  for (const json& chunk : plan.at("chunks")) {
    EXPECT_EQ(chunk.at("precision"),
              std::string(chunk.at("n_tokens") == kChunkSize ? "int4" : "fp16"))
        << chunk;
  }
}

TEST(CliPlan, SvgDrawsEveryChunkInBothStrips) {
  const ScratchDir scratch;
  const std::string svg_file = scratch.path("plan.svg").string();
  const json plan = plan_json({"--svg", svg_file});
  const std::string svg = read_file(svg_file);
  EXPECT_TRUE(svg.starts_with("<svg")) << svg.substr(0, 200);
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  // Chunk bars and legend swatches are placed rects; the white background is not.
  EXPECT_EQ(occurrences(svg, "<rect x="), 2 * plan.at("chunks").size() + precisions_used(plan));
}

}  // namespace
}  // namespace cocktail::testing
