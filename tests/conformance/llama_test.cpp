// A whole model on each backend: a tiny synthetic Llama, and one of the Qwen2 architecture
// (tests/models/llama/tiny_llama.hpp), prefills a prompt into an FP16 cache, commits it, and
// decodes greedily. Every step's logits must match the float64 reference forward, and the
// tokens what the CPU backend picks.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cocktail/models/llama_model.hpp"
#include "cocktail/session.hpp"
#include "conformance.hpp"
#include "models/llama/tiny_llama.hpp"
#include "reference.hpp"

namespace cocktail::conformance {
namespace {

using testing::TinyLlama;

// An FP16 cache keeps K and V as the reference does (rounded to FP16), so only float32
// rounding separates the two.
constexpr double kTolerance = 1e-4;
constexpr int kPromptTokens = 20;
constexpr int kDecodeSteps = 8;

// A tiny model of one architecture, written to a file.
struct TinyFile {
  explicit TinyFile(const std::string& architecture) {
    tiny.architecture = architecture;
    path = tiny.write(dir, 7);
  }
  testing::TempDir dir;
  TinyLlama tiny;
  std::filesystem::path path;
};

class LlamaConformance : public BackendTest {
 protected:
  // Prefills the prompt, commits it as FP16 chunks of 8 tokens (shorter than the cache's groups
  // of 32) and decodes greedily; checks every step's logits against the reference. Returns the
  // tokens it picked.
  static std::vector<std::int32_t> greedy_tokens(const std::shared_ptr<Backend>& backend,
                                                 const TinyFile& file) {
    SCOPED_TRACE(std::string(backend->name()) + " backend, " + file.tiny.architecture);
    const TinyLlama& tiny = file.tiny;
    const models::LlamaModel model(file.path);
    const models::LlamaWeights weights(model, backend);
    Options planner_options("planner.uniform", {"llama_test", 0});
    planner_options.set("precision", std::string("fp16"), {"llama_test", 0});
    planner_options.set("chunk_size", std::int64_t(8), {"llama_test", 0});
    Session session(backend, backend->make_kv_store({model.hparams().kv_shape(), {}, 0}),
                    backend->make_attention(), registry().make_planner("uniform", &planner_options),
                    registry().make_scorer("bm25"));
    models::LlamaRunner runner(weights, 16);

    std::vector<std::int32_t> tokens = prompt();
    std::vector<float> logits(TinyLlama::kVocab);
    runner.prefill(session, tokens, logits);
    EXPECT_LT(relative_error(logits, tiny.reference_logits(tokens)), kTolerance) << "prefill";
    std::vector<std::string> texts;
    for (const std::int32_t t : tokens) texts.emplace_back(1, char('A' + t));  // the vocabulary
    EXPECT_EQ(session.plan_and_commit(texts, "").n_tokens(), kPromptTokens);

    std::vector<std::int32_t> generated;
    for (int step = 0; step < kDecodeSteps; ++step) {
      const auto next =
          std::int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
      generated.push_back(next);
      tokens.push_back(next);
      runner.step(session, next, logits);
      EXPECT_LT(relative_error(logits, tiny.reference_logits(tokens)), kTolerance)
          << "decode step " << step;
    }
    return generated;
  }

 private:
  static std::vector<std::int32_t> prompt() {
    std::mt19937 rng(2);
    std::uniform_int_distribution<int> id(0, TinyLlama::kVocab - 3);  // no ChatML markers
    std::vector<std::int32_t> out(kPromptTokens);
    for (std::int32_t& t : out) t = id(rng);
    return out;
  }
};
COCKTAIL_CONFORMANCE_SUITE(LlamaConformance);

TEST_P(LlamaConformance, GreedyDecodeMatchesReferenceAndCpu) {
  const BackendUnderTest& cpu = backend_under_test("cpu");
  ASSERT_NE(cpu.backend, nullptr) << cpu.unavailable;
  for (const char* architecture : {"llama", "qwen2"}) {
    const TinyFile file(architecture);
    EXPECT_EQ(greedy_tokens(shared_backend(), file), greedy_tokens(cpu.backend, file))
        << architecture;
  }
}

}  // namespace
}  // namespace cocktail::conformance
