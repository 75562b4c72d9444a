// The real model against two independent implementations: fixtures recorded with llama.cpp
// (scripts/make-fixtures.py, through llama-cpp-python) and a float64 NumPy forward
// (scripts/make-reference-logits.py). Token ids must be identical; with the FP16 cache, logits
// must be near the float64 ones, the top-1 token must be llama.cpp's wherever llama.cpp and the
// float64 forward agree, and greedy decoding must continue exactly as llama.cpp's.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cocktail/config.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/models/llama_model.hpp"
#include "cocktail/models/model_settings.hpp"

namespace cocktail::models {
namespace {

// Against the float64 reference forward (scripts/make-reference-logits.py), with the default
// 16-bit activations of the quantized prefill matmuls: 0.010 seen (docs/results.md); llama.cpp's
// own 8-bit activations put it 0.75 away.
constexpr double kReferenceTolerance = 0.1;

nlohmann::json fixture(const std::string& name) {
  std::ifstream in(std::string(COCKTAIL_SOURCE_DIR) + "/tests/fixtures/smollm2/" + name);
  EXPECT_TRUE(in) << "missing fixture " << name;
  return nlohmann::json::parse(in);
}

class LlamaFixtureTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* skip = std::getenv("COCKTAIL_SKIP_MODEL_TESTS");
    if (skip && std::string(skip) == "1") return;
    model_ = std::make_unique<LlamaModel>(ModelSettings{}.resolved_path());
  }
  static void TearDownTestSuite() { model_.reset(); }

  void SetUp() override {
    if (!model_) GTEST_SKIP() << "COCKTAIL_SKIP_MODEL_TESTS=1";
  }

  static std::unique_ptr<LlamaModel> model_;
  Engine engine_{
      parse_config("[engine]\nbackend = \"cpu\"\nplanner = \"uniform\"\n"
                   "[planner.uniform]\nprecision = \"fp16\"\n",
                   "llama_fixture_test.toml")};
  std::shared_ptr<Compute> compute_ = engine_.backend().make_compute();
};

std::unique_ptr<LlamaModel> LlamaFixtureTest::model_;

TEST_F(LlamaFixtureTest, TokenIdsMatchLlamaCpp) {
  const nlohmann::json tokens = fixture("tokens.json");
  ASSERT_GE(tokens.at("cases").size(), 30u);
  for (const nlohmann::json& c : tokens.at("cases")) {
    const std::string text = c.at("text");
    EXPECT_EQ(model_->tokenizer().encode(text, false), c.at("ids").get<std::vector<TokenId>>())
        << c.at("name");
    EXPECT_EQ(model_->tokenizer().encode(text, true),
              c.at("ids_special").get<std::vector<TokenId>>())
        << c.at("name");
  }
}

// Logits at every recorded position of the fixture prompts, prefilled in blocks that end there.
std::vector<std::vector<float>> logits_at_positions(const LlamaWeights& weights,
                                                    const Engine& engine,
                                                    const nlohmann::json& prompt,
                                                    std::vector<TokenId>& greedy) {
  const LlamaModel& model = weights.model();
  const auto ids = model.tokenizer().encode(prompt.at("prompt").get<std::string>(), true);
  EXPECT_EQ(ids, prompt.at("ids").get<std::vector<TokenId>>()) << prompt.at("name");
  Session session = engine.new_session(model.hparams().kv_shape());
  LlamaRunner runner(weights, 128);
  std::vector<float> out(static_cast<std::size_t>(model.hparams().n_vocab));
  std::vector<std::vector<float>> rows;
  std::size_t done = 0;
  for (const nlohmann::json& at : prompt.at("positions")) {
    const auto pos = at.at("pos").get<std::size_t>();
    runner.prefill(session, std::span(ids).subspan(done, pos + 1 - done), out);
    done = pos + 1;
    rows.push_back(out);
  }
  // Then greedy decoding through the cache, as long as llama.cpp's continuation.
  runner.prefill(session, std::span(ids).subspan(done), out);
  const std::size_t n = prompt.at("greedy").at("ids").size();
  for (std::size_t i = 0; i < n; ++i) {
    greedy.push_back(TokenId(std::max_element(out.begin(), out.end()) - out.begin()));
    if (i + 1 < n) runner.step(session, greedy.back(), out);
  }
  return rows;
}

int arg_max(const std::vector<float>& row) {
  return int(std::max_element(row.begin(), row.end()) - row.begin());
}

TEST_F(LlamaFixtureTest, Fp16CacheMatchesLlamaCppAndTheFloat64Reference) {
  const nlohmann::json llama_cpp = fixture("logits.json");
  const nlohmann::json reference = fixture("reference_logits.json");
  double worst_llama_cpp = 0.0, worst_reference = 0.0;
  int agree = 0, positions = 0;
  const LlamaWeights weights(*model_, compute_);
  for (std::size_t p = 0; p < llama_cpp.at("prompts").size(); ++p) {
    const nlohmann::json& prompt = llama_cpp.at("prompts")[p];
    const nlohmann::json& exact = reference.at("prompts")[p].at("positions");
    const std::string name = prompt.at("name");
    std::vector<TokenId> greedy;
    const auto rows = logits_at_positions(weights, engine_, prompt, greedy);
    EXPECT_EQ(greedy, prompt.at("greedy").at("ids").get<std::vector<TokenId>>()) << name;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const nlohmann::json& at = prompt.at("positions")[i];
      const auto top = at.at("top_ids").get<std::vector<int>>();
      const auto top_logits = at.at("top_logits").get<std::vector<double>>();
      const auto exact_top = exact[i].at("top_ids").get<std::vector<int>>();
      const auto exact_logits = exact[i].at("top_logits").get<std::vector<double>>();
      for (std::size_t k = 0; k < top.size(); ++k) {
        worst_llama_cpp = std::max(worst_llama_cpp,
                                   std::fabs(double(rows[i][std::size_t(top[k])]) - top_logits[k]));
        const double diff = std::fabs(double(rows[i][std::size_t(exact_top[k])]) - exact_logits[k]);
        worst_reference = std::max(worst_reference, diff);
        EXPECT_LT(diff, kReferenceTolerance) << name << " position " << at.at("pos");
      }
      ++positions;
      agree += arg_max(rows[i]) == top[0] ? 1 : 0;
      // Where llama.cpp and the exact forward pick the same token, so must we; where they
      // differ (llama.cpp's 8-bit activations tip a near tie), we must pick one of the two.
      EXPECT_TRUE(arg_max(rows[i]) == top[0] || arg_max(rows[i]) == exact_top[0])
          << name << " position " << at.at("pos") << ": " << arg_max(rows[i]);
      if (top[0] == exact_top[0]) {
        EXPECT_EQ(arg_max(rows[i]), top[0]) << name << " position " << at.at("pos");
      }
    }
  }
  std::printf("top-1 agreement with llama.cpp: %d of %d positions\n", agree, positions);
  std::printf("largest logit difference: %.4f to llama.cpp, %.4f to the float64 reference\n",
              worst_llama_cpp, worst_reference);
}

}  // namespace
}  // namespace cocktail::models
