// all-MiniLM-L6-v2 as scripts/fetch-models downloads it, against fixtures recorded with
// sentence-transformers (scripts/make-minilm-fixtures.py): identical token ids, and embeddings
// whose cosine similarity with the reference is at least kMinCosine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cocktail/models/bert_encoder.hpp"
#include "cocktail/models/model_cache.hpp"
#include "support/direct_cpu_backend.hpp"

namespace cocktail::models {
namespace {

namespace fs = std::filesystem;

// The issue asks for a cosine of 0.999. Float32 against PyTorch's float32 reaches 1 - 2e-12 and
// elements within 4e-7 of the reference's (printed by the test; the fixture keeps 7 digits),
// so these bounds still leave a wide margin while a real deviation shows long before 0.999.
constexpr double kMinCosine = 1.0 - 1e-8;
constexpr double kMaxElementDifference = 1e-5;

fs::path model_dir() {
  return model_cache_dir() / "all-MiniLM-L6-v2";
}

nlohmann::json fixture() {
  std::ifstream in(std::string(COCKTAIL_SOURCE_DIR) + "/tests/fixtures/minilm/embeddings.json");
  EXPECT_TRUE(in) << "missing fixture tests/fixtures/minilm/embeddings.json";
  return nlohmann::json::parse(in);
}

class MiniLmFixtureTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (fs::exists(model_dir() / "model.safetensors")) {
      model_ = std::make_unique<BertModel>(model_dir());
    }
  }
  static void TearDownTestSuite() { model_.reset(); }

  void SetUp() override {
    if (model_) return;
    const char* skip = std::getenv("COCKTAIL_SKIP_MODEL_TESTS");
    if (skip && std::string(skip) == "1") GTEST_SKIP() << model_dir().string() << " is absent";
    FAIL() << model_dir().string()
           << " is absent: run scripts/fetch-models to download it (it goes to "
              "$COCKTAIL_MODEL_DIR, by default ~/.cache/cocktail/models), or set "
              "COCKTAIL_SKIP_MODEL_TESTS=1 to skip the tests that need it";
  }

  static std::unique_ptr<BertModel> model_;
  const nlohmann::json fixture_ = fixture();
};

std::unique_ptr<BertModel> MiniLmFixtureTest::model_;

TEST_F(MiniLmFixtureTest, ConfigIsMiniLmL6) {
  const BertConfig& c = model_->config();
  EXPECT_EQ(c.n_layers, 6);
  EXPECT_EQ(c.hidden_size, 384);
  EXPECT_EQ(c.n_heads, 12);
  EXPECT_EQ(c.intermediate_size, 1536);
  EXPECT_EQ(c.vocab_size, 30522);
  EXPECT_EQ(c.max_seq_length, fixture_.at("max_seq_length").get<int>());
  EXPECT_EQ(c.layer_norm_eps, 1e-12f);
}

TEST_F(MiniLmFixtureTest, TokenIdsMatchHuggingFace) {
  const auto max = std::size_t(model_->config().max_seq_length);
  ASSERT_GE(fixture_.at("cases").size(), 20u);
  for (const nlohmann::json& c : fixture_.at("cases")) {
    EXPECT_EQ(model_->tokenizer().encode(c.at("text").get<std::string>(), max),
              c.at("ids").get<std::vector<std::int32_t>>())
        << c.at("name");
  }
}

// All cases in one call with batches of 300 tokens: several forwards, sequences of 2 to 256.
TEST_F(MiniLmFixtureTest, EmbeddingsMatchSentenceTransformers) {
  std::vector<std::vector<std::int32_t>> sequences;
  for (const nlohmann::json& c : fixture_.at("cases")) {
    sequences.push_back(c.at("ids").get<std::vector<std::int32_t>>());
  }
  BertEncoder encoder(*model_, testing::cpu_backend(), 300);
  const std::vector<float> got = encoder.embed(sequences);
  const auto h = std::size_t(model_->config().hidden_size);
  double worst = 1.0, worst_element = 0.0;
  std::string worst_name;
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const nlohmann::json& c = fixture_.at("cases")[s];
    const auto want = c.at("embedding").get<std::vector<double>>();
    ASSERT_EQ(want.size(), h);
    double dot = 0.0, got_norm = 0.0, want_norm = 0.0;
    for (std::size_t i = 0; i < h; ++i) {
      worst_element = std::max(worst_element, std::abs(got[s * h + i] - want[i]));
      dot += got[s * h + i] * want[i];
      got_norm += double(got[s * h + i]) * got[s * h + i];
      want_norm += want[i] * want[i];
    }
    const double cosine = dot / std::sqrt(got_norm * want_norm);
    EXPECT_GE(cosine, kMinCosine) << c.at("name");
    EXPECT_NEAR(got_norm, 1.0, 1e-5) << c.at("name");
    if (cosine < worst) {
      worst = cosine;
      worst_name = c.at("name");
    }
  }
  std::printf(
      "worst cosine against sentence-transformers: 1 - %.3g (%s); largest element "
      "difference %.3g\n",
      1.0 - worst, worst_name.c_str(), worst_element);
  EXPECT_LE(worst_element, kMaxElementDifference);
}

}  // namespace
}  // namespace cocktail::models
