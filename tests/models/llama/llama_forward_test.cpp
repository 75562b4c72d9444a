#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "cocktail/config.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/error.hpp"
#include "cocktail/models/llama_model.hpp"
#include "cocktail/models/question_answering.hpp"
#include "support/error_of.hpp"
#include "tiny_llama.hpp"

namespace cocktail::models {
namespace {

using ::testing::HasSubstr;
using testing::TinyLlama;

// An FP16 cache: the forward must match the float64 reference up to float32 rounding.
Engine fp16_engine() {
  return Engine(
      parse_config("[engine]\nbackend = \"cpu\"\nplanner = \"uniform\"\n"
                   "[planner.uniform]\nprecision = \"fp16\"\n",
                   "llama_forward_test.toml"));
}

std::vector<std::int32_t> random_tokens(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> id(0, TinyLlama::kVocab - 3);
  std::vector<std::int32_t> out(static_cast<std::size_t>(n));
  for (auto& t : out) t = id(rng);
  return out;
}

// Largest difference relative to the largest reference logit.
double relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::fabs(double(got[i]) - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return diff / scale;
}

TinyLlama of_architecture(const std::string& architecture) {
  TinyLlama tiny;
  tiny.architecture = architecture;
  return tiny;
}

// Every test runs on both architectures the decoder reads: Llama, and Qwen2 (q, k and v biases,
// NeoX RoPE).
class TinyLlamaTest : public ::testing::TestWithParam<std::string> {
 protected:
  testing::TempDir dir_;
  TinyLlama tiny_ = of_architecture(GetParam());
  std::filesystem::path path_ = tiny_.write(dir_, 7);
  Engine engine_ = fp16_engine();
  const std::shared_ptr<Backend>& backend_ = engine_.backend();
};
INSTANTIATE_TEST_SUITE_P(Architectures, TinyLlamaTest, ::testing::Values("llama", "qwen2"),
                         [](const auto& test) { return test.param; });

TEST_P(TinyLlamaTest, ReadsHyperparametersAndTokenizer) {
  const LlamaModel model(path_);
  const LlamaHyperparameters& h = model.hparams();
  const bool qwen2 = GetParam() == "qwen2";
  EXPECT_EQ(h.architecture, GetParam());
  EXPECT_EQ(h.n_layers, TinyLlama::kLayers);
  EXPECT_EQ(h.head_dim, TinyLlama::kHeadDim);
  EXPECT_EQ(h.n_kv_heads, TinyLlama::kKvHeads);
  EXPECT_EQ(h.n_vocab, TinyLlama::kVocab);
  EXPECT_EQ(h.qkv_bias, qwen2);
  EXPECT_EQ(h.rope_style, qwen2 ? RopeStyle::halves : RopeStyle::adjacent_pairs);
  EXPECT_EQ(model.layers()[0].k_bias.size(), qwen2 ? std::size_t(TinyLlama::kHeadDim) : 0u);
  EXPECT_EQ(model.tokenizer().encode("ABC", false), (std::vector<TokenId>{0, 1, 2}));
}

TEST(TinyLlamaFile, RefusesAnotherArchitectureAndScaledRope) {
  testing::TempDir dir;
  TinyLlama mistral = of_architecture("mistral");
  const auto mistral_path = mistral.write(dir, 1);
  EXPECT_THAT(testing::error_of<Error>([&] { LlamaModel{mistral_path}; }),
              HasSubstr("general.architecture = 'mistral' is not supported; supported: llama, "
                        "qwen2"));
  TinyLlama yarn = of_architecture("qwen2");
  yarn.extra_metadata = {{"qwen2.rope.scaling.type", testing::TestValue::string("yarn")}};
  const auto yarn_path = yarn.write(dir, 1);
  EXPECT_THAT(testing::error_of<Error>([&] { LlamaModel{yarn_path}; }),
              HasSubstr("qwen2.rope.scaling.type = 'yarn' is not supported; supported: none"));
}

// Prefill in blocks of every size gives the logits of one pass over the whole prompt.
TEST_P(TinyLlamaTest, PrefillMatchesFloat64ReferenceForEveryBlockSize) {
  const LlamaModel model(path_);
  const std::vector<std::int32_t> tokens = random_tokens(45, 1);
  const std::vector<double> want = tiny_.reference_logits(tokens);
  const LlamaWeights weights(model, backend_);
  for (const int block : {1, 7, 32, 64}) {
    Session session = engine_.new_session(model.hparams().kv_shape());
    LlamaRunner runner(weights, block);
    std::vector<float> logits(TinyLlama::kVocab);
    runner.prefill(session, tokens, logits);
    EXPECT_LT(relative_error(logits, want), 1e-4) << "block " << block;
    EXPECT_EQ(session.store().n_tokens(), 45);
  }
}

// Decoding token by token after a prefill continues the same sequence.
TEST_P(TinyLlamaTest, DecodeStepsMatchFloat64Reference) {
  const LlamaModel model(path_);
  std::vector<std::int32_t> tokens = random_tokens(20, 2);
  Session session = engine_.new_session(model.hparams().kv_shape());
  const LlamaWeights weights(model, backend_);
  LlamaRunner runner(weights, 16);
  std::vector<float> logits(TinyLlama::kVocab);
  runner.prefill(session, tokens, logits);
  for (const std::int32_t next : random_tokens(5, 3)) {
    tokens.push_back(next);
    runner.step(session, next, logits);
    EXPECT_LT(relative_error(logits, tiny_.reference_logits(tokens)), 1e-4)
        << "at token " << tokens.size();
  }
}

// Only decode steps are timed, each split between its parts; a step that fails is not counted.
TEST_P(TinyLlamaTest, DecodeTimesCountDecodeStepsByPart) {
  const LlamaModel model(path_);
  Session session = engine_.new_session(model.hparams().kv_shape());
  const LlamaWeights weights(model, backend_);
  LlamaRunner runner(weights, 16);
  std::vector<float> logits(TinyLlama::kVocab);
  runner.prefill(session, random_tokens(20, 5), logits);
  EXPECT_EQ(runner.decode_times().steps, 0);
  EXPECT_EQ(runner.decode_times().total_s(), 0.0);

  for (const std::int32_t next : random_tokens(3, 6)) runner.step(session, next, logits);
  const DecodeTimes after_steps = runner.decode_times();
  EXPECT_EQ(after_steps.steps, 3);
  EXPECT_GT(after_steps.matmul_s, 0.0);
  EXPECT_GT(after_steps.attention_s, 0.0);
  EXPECT_GT(after_steps.logits_s, 0.0);
  EXPECT_GT(after_steps.other_s, 0.0);

  std::vector<float> wrong(3);
  EXPECT_THROW(runner.step(session, 1, wrong), Error);
  runner.prefill(session, random_tokens(4, 7), logits);
  EXPECT_EQ(runner.decode_times().steps, 3);
  EXPECT_EQ(runner.decode_times().total_s(), after_steps.total_s());
}

// The CPU backend under another name.
class RenamedBackend final : public Backend {
 public:
  explicit RenamedBackend(std::shared_ptr<Backend> cpu) : cpu_(std::move(cpu)) {}
  std::string_view name() const override { return "other"; }
  DeviceInfo device() const override { return cpu_->device(); }
  std::shared_ptr<Quantizer> make_quantizer(const QuantSpec& spec) override {
    return cpu_->make_quantizer(spec);
  }
  std::shared_ptr<KvStore> make_kv_store(const KvStoreOptions& options) override {
    return cpu_->make_kv_store(options);
  }
  std::shared_ptr<AttentionExecutor> make_attention() override { return cpu_->make_attention(); }
  std::shared_ptr<Compute> make_compute() override { return cpu_->make_compute(); }
  std::shared_ptr<Buffer> allocate(std::size_t bytes) override { return cpu_->allocate(bytes); }
  std::shared_ptr<Stream> make_stream() override { return cpu_->make_stream(); }
  std::shared_ptr<Buffer> wrap_memory(void* memory, std::size_t bytes) override {
    return cpu_->wrap_memory(memory, bytes);
  }
  std::shared_ptr<Stream> wrap_stream(void* native_stream) override {
    return cpu_->wrap_stream(native_stream);
  }
  double measure_read_bandwidth(std::size_t bytes) override {
    return cpu_->measure_read_bandwidth(bytes);
  }

 private:
  std::shared_ptr<Backend> cpu_;
};

TEST_P(TinyLlamaTest, AnswererRefusesWeightsOfAnotherBackend) {
  const LlamaModel model(path_);
  auto weights =
      std::make_shared<const LlamaWeights>(model, std::make_shared<RenamedBackend>(backend_));
  EXPECT_THAT(
      testing::error_of<Error>([&] { QuestionAnswerer(engine_, weights, ModelSettings{}); }),
      HasSubstr("the model's weights were uploaded to the other backend, not cpu"));
  const QuestionAnswerer own(engine_, model, ModelSettings{});
  EXPECT_NO_THROW(QuestionAnswerer(engine_, own.weights(), ModelSettings{}));
}

TEST_P(TinyLlamaTest, RejectsAWrongLogitsBuffer) {
  const LlamaModel model(path_);
  Session session = engine_.new_session(model.hparams().kv_shape());
  const LlamaWeights weights(model, backend_);
  LlamaRunner runner(weights, 8);
  std::vector<float> logits(3);
  EXPECT_THAT(
      testing::error_of<Error>([&] { runner.prefill(session, random_tokens(4, 4), logits); }),
      HasSubstr("logits buffer of 3 floats; the model has 40 tokens"));
}

}  // namespace
}  // namespace cocktail::models
