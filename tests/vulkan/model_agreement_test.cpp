// `cocktail run --set engine.backend=vulkan` on the real model (scripts/fetch-models) against
// the CPU backend: with the FP16 cache the answer's tokens are the CPU's; with the Cocktail
// cache, whose plan mixes FP16, INT4 and INT2 chunks, the CPU's answer fed through the Vulkan
// cache token by token (teacher forcing, as `cocktail eval` measures a cache) gets the CPU's
// top-1 token at 99% of the steps or more. Lavapipe runs the model at a few tokens a second, so
// the context is just long enough for a mixed plan and the answer is short.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cocktail/config.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/error.hpp"
#include "cocktail/models/question_answering.hpp"
#include "cocktail/models/teacher_forcing.hpp"
#include "cocktail/stopwatch.hpp"
#include "models/llama/real_model_test.hpp"

namespace cocktail::models {
namespace {

constexpr double kMinTop1 = 0.99;

const std::vector<std::string> kFp16Cache = {"engine.planner=uniform",
                                             "planner.uniform.precision=fp16"};
const std::vector<std::string> kCocktailCache = {"engine.planner=cocktail"};

// Four full chunks of 32 tokens and an FP16 remainder (about 170 prompt tokens): the cocktail
// planner keeps the best-scored chunk at FP16 and spreads the others over INT4 and INT2. Eight
// answer tokens: a decode step costs lavapipe about as much as ten prompt tokens.
Question short_question() {
  Question q;
  for (int i = 0; i < 5; ++i) {
    q.context += "The ferry to the island leaves at " + std::to_string(6 + i) +
                 " o'clock from the north pier, and the crossing takes forty minutes. ";
  }
  q.context += "The lighthouse keeper's cat is called Marmalade. ";
  q.question = "What is the lighthouse keeper's cat called?";
  q.max_new_tokens = 8;
  return q;
}

// The engine `cocktail run --set engine.backend=<backend> --set <overrides>` makes.
std::unique_ptr<Engine> engine_for(const std::string& backend, std::vector<std::string> overrides) {
  overrides.insert(overrides.begin(), "engine.backend=" + backend);
  return std::make_unique<Engine>(parse_config("", "<defaults>", overrides));
}

std::string precisions(const Plan& plan) {
  std::string out;
  for (const ChunkPlan& chunk : plan.chunks) out += std::string(to_string(chunk.precision)) + " ";
  return out;
}

class VulkanModelTest : public RealModelTest<> {
 protected:
  // The Vulkan engine, or null where no device runs Vulkan: the test is then skipped with the
  // reason, unless COCKTAIL_REQUIRE_VULKAN=1 (CI, which installs lavapipe) says it must run.
  void make_vulkan_engine(const std::vector<std::string>& overrides, std::unique_ptr<Engine>& out) {
    try {
      out = engine_for("vulkan", overrides);
    } catch (const PluginError& e) {
      const char* required = std::getenv("COCKTAIL_REQUIRE_VULKAN");
      if (required != nullptr && std::strcmp(required, "1") == 0) {
        FAIL() << "COCKTAIL_REQUIRE_VULKAN=1, but the Vulkan backend cannot run: " << e.what();
      }
      GTEST_SKIP() << e.what();
    }
  }
};

TEST_F(VulkanModelTest, Fp16CacheAnswersWithTheCpusTokens) {
  std::unique_ptr<Engine> vulkan;
  make_vulkan_engine(kFp16Cache, vulkan);
  if (!vulkan) return;
  const std::unique_ptr<Engine> cpu = engine_for("cpu", kFp16Cache);
  const Question question = short_question();
  const Answer expected = QuestionAnswerer(*cpu, *model_, ModelSettings{}).answer(question);
  const Stopwatch watch;
  const Answer answer = QuestionAnswerer(*vulkan, *model_, ModelSettings{}).answer(question);
  std::printf("vulkan, FP16 cache: \"%s\" (%zu tokens, prefill %.1f s, %.2f s per token, %.1f s)\n",
              answer.text.c_str(), answer.tokens.size(), answer.stats.prefill_s,
              answer.stats.tpot_s(), watch.seconds());
  ASSERT_GE(expected.tokens.size(), 4u) << expected.text;
  EXPECT_EQ(answer.tokens, expected.tokens)
      << "vulkan: " << answer.text << "\ncpu: " << expected.text;
}

TEST_F(VulkanModelTest, CocktailCacheAgreesWithTheCpusTeacherForced) {
  std::unique_ptr<Engine> vulkan;
  make_vulkan_engine(kCocktailCache, vulkan);
  if (!vulkan) return;
  const std::unique_ptr<Engine> cpu = engine_for("cpu", kCocktailCache);
  const Question question = short_question();
  const QuestionAnswerer cpu_answerer(*cpu, *model_, ModelSettings{});
  AnswerInProgress on_cpu = cpu_answerer.start(question);
  const Plan cpu_plan = on_cpu.plan();
  const GreedyAnswer reference = std::move(on_cpu).reference_answer();

  const Stopwatch watch;
  const QuestionAnswerer vulkan_answerer(*vulkan, *model_, ModelSettings{});
  AnswerInProgress on_vulkan = vulkan_answerer.start(question);
  // The plan scores chunks by the attention the question paid them during the prefill, on
  // each backend's own kernels: it must be the CPU's for the two caches to be the same mix.
  EXPECT_TRUE(on_vulkan.plan().stores_like(cpu_plan))
      << "vulkan: " << precisions(on_vulkan.plan()) << "\ncpu: " << precisions(cpu_plan);
  ASSERT_GT(cpu_plan.tokens_at(Precision::int4), 0) << precisions(cpu_plan);
  ASSERT_GT(cpu_plan.tokens_at(Precision::int2), 0) << precisions(cpu_plan);
  const Agreement agreement = std::move(on_vulkan).teacher_force(reference);
  std::printf(
      "vulkan, Cocktail cache (%s): top-1 = the CPU's at %lld of %lld steps, mean KLD %.2e "
      "(%.1f s)\n",
      precisions(cpu_plan).c_str(), static_cast<long long>(agreement.top1_matches),
      static_cast<long long>(agreement.steps), agreement.mean_kld(), watch.seconds());
  ASSERT_GE(agreement.steps, 4);
  EXPECT_GE(agreement.top1(), kMinTop1);
}

}  // namespace
}  // namespace cocktail::models
