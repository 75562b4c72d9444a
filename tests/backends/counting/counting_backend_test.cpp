#include "counting_backend.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cocktail/config.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/error.hpp"
#include "cocktail/models/llama_model.hpp"
#include "cocktail/plugin_registry.hpp"
#include "cocktail/session.hpp"
#include "models/llama/tiny_llama.hpp"
#include "support/direct_cpu_backend.hpp"
#include "support/error_of.hpp"
#include "support/random_kv.hpp"

namespace cocktail::testing {
namespace {

using ::testing::HasSubstr;

// One letter is one token of the tiny model. The context is planned in chunks of 4; the query
// stays in the FP16 tail with the decoded tokens.
constexpr const char* kContext = "THEQUICKBROWNFOXJUMP";
constexpr const char* kQuery = "OVER";
constexpr const char* kDecoded = "LAZYDOG";
constexpr int kChunkTokens = 4;
constexpr int kPrefillBlock = 8;

// The stream a session of the counting backend enqueues on.
CountingStream& counting_stream(const Session& session) {
  return dynamic_cast<CountingStream&>(session.stream());
}

// A budget planner of 3 bits per element on average: the context chunks go to INT4 and INT2.
std::shared_ptr<ChunkPlanner> budget_planner(const PluginRegistry& registry) {
  Options o("planner.budget", {"counting_backend_test.toml", 1});
  o.set("chunk_size", std::int64_t{kChunkTokens}, {"counting_backend_test.toml", 2});
  o.set("target_bits", 3.0, {"counting_backend_test.toml", 3});
  return registry.make_planner("budget", &o);
}

// The tiny Llama decoding one sequence on a backend, on a budget-planned cache.
class TinySequence {
 public:
  TinySequence(const models::LlamaModel& model, const std::shared_ptr<Backend>& backend,
               const PluginRegistry& registry)
      : model_(model),
        weights_(model, backend),
        session_(backend,
                 backend->make_kv_store(
                     {model.hparams().kv_shape(), KvQuantLayout{}, TinyLlama::kContext}),
                 backend->make_attention(), budget_planner(registry), registry.make_scorer("bm25")),
        runner_(weights_, kPrefillBlock),
        logits_(std::size_t(model.hparams().n_vocab)) {}

  // Prefills the context and the query, then plans and commits the context; the logits of the
  // query's last token.
  const std::vector<float>& prefill_and_commit() {
    const std::vector<std::int32_t> context = tokens(kContext);
    std::vector<std::int32_t> prompt = context;
    for (const std::int32_t t : tokens(kQuery)) prompt.push_back(t);
    runner_.prefill(session_, prompt, logits_);
    std::vector<std::string> texts;
    for (const std::int32_t t : context) {
      texts.emplace_back(model_.tokenizer().token_piece(t, false));
    }
    session_.plan_and_commit(texts, kQuery);
    return logits_;
  }

  const std::vector<float>& step(std::int32_t token) {
    runner_.step(session_, token, logits_);
    return logits_;
  }

  std::vector<std::int32_t> tokens(const std::string& text) const {
    return model_.tokenizer().encode(text, false);
  }
  const Session& session() const { return session_; }

 private:
  const models::LlamaModel& model_;
  const models::LlamaWeights weights_;
  Session session_;
  models::LlamaRunner runner_;
  std::vector<float> logits_;
};

class CountingBackendTest : public ::testing::Test {
 protected:
  TempDir dir_;
  TinyLlama tiny_;
  const models::LlamaModel model_{tiny_.write(dir_, 11)};
  const PluginRegistry registry_;
  const std::shared_ptr<CountingBackend> counting_ = std::make_shared<CountingBackend>();
};

// A decode step on the device: its token and position go up, its logits come down, and the
// stream waits once, for them. The logits are the CPU backend's, bit for bit (same kernels).
TEST_F(CountingBackendTest, DecodeStepCopiesOnlyItsLogitsToTheHost) {
  TinySequence counted(model_, counting_, registry_);
  TinySequence reference(model_, cpu_backend(), registry_);
  EXPECT_EQ(counted.prefill_and_commit(), reference.prefill_and_commit());

  // The steps read quantized segments as well as the FP16 tail.
  const KvStore& store = counted.session().store();
  EXPECT_EQ(store.n_tokens(), 24);
  EXPECT_GT(store.n_committed(), 0);
  bool quantized = false;
  for (const SegmentInfo& s : store.segments()) {
    quantized = quantized || (s.precision != Precision::fp16 && s.n_tokens > 0);
  }
  EXPECT_TRUE(quantized);

  CountingStream& stream = counting_stream(counted.session());
  // LlamaRunner::run_block uploads the token id and its position; output_logits downloads the
  // logits and synchronizes once. Nothing else crosses, on this stream or any other.
  const Counts per_step{.uploads = 2, .downloads = 1, .copies = 0, .synchronizes = 1};
  for (const std::int32_t token : counted.tokens(kDecoded)) {
    stream.reset_counts();
    counting_->reset_total_counts();
    const std::vector<float>& logits = counted.step(token);
    EXPECT_EQ(stream.counts(), per_step) << "token " << token;
    EXPECT_EQ(counting_->total_counts(), per_step) << "token " << token;
    EXPECT_EQ(logits, reference.step(token)) << "token " << token;
  }
}

TEST_F(CountingBackendTest, RefusesTensorsOutsideItsOwnBuffers) {
  const std::shared_ptr<Compute> compute = counting_->make_compute();
  const std::shared_ptr<Stream> stream = counting_->make_stream();
  const std::shared_ptr<Buffer> own = counting_->allocate(4 * sizeof(float));
  const std::shared_ptr<Buffer> cpu = cpu_backend()->allocate(4 * sizeof(float));
  const Tensor mine{own.get(), 0, ElementType::f32, 1, 4};
  const Tensor theirs{cpu.get(), 0, ElementType::f32, 1, 4};

  EXPECT_THAT(error_of<Error>([&] { compute->add(*stream, mine, theirs); }),
              HasSubstr("add: y (f32 [1 x 4]) is in another backend's memory"));
  EXPECT_THAT(error_of<Error>([&] { compute->add(*stream, theirs, mine); }),
              HasSubstr("add: x (f32 [1 x 4]) is in another backend's memory"));
  EXPECT_THAT(error_of<Error>([&] { stream->download(Tensor{}, {}); }),
              HasSubstr("download: src (f32 [0 x 0]) is an empty view"));
  EXPECT_THAT(error_of<Error>([&] { compute->add(*cpu_backend()->make_stream(), mine, mine); }),
              HasSubstr("add: a stream of another backend"));
  EXPECT_EQ(counting_->total_counts(), Counts{});
}

constexpr KvShape kShape{1, 1, 32};
constexpr int kQueryHeads = 2;

// A session on `backend` whose cache stays FP16.
Session fp16_session(const std::shared_ptr<Backend>& backend, const PluginRegistry& registry) {
  Options o("planner.uniform", {"counting_backend_test.toml", 1});
  o.set("precision", std::string("fp16"), {"counting_backend_test.toml", 2});
  return Session(backend, backend->make_kv_store({kShape, KvQuantLayout{}, 0}),
                 backend->make_attention(), registry.make_planner("uniform", &o),
                 registry.make_scorer("bm25"));
}

// Random K/V of a few tokens through the host-span append.
void append_tokens(Session& session) {
  std::mt19937 rng(5);
  append_random(session, kShape, 6, rng);
}

// One query token's attention through the host-span decode.
std::vector<float> decode_on_host(Session& session) {
  std::mt19937 rng(6);
  const std::vector<float> q = random_floats(std::size_t(kQueryHeads * kShape.head_dim), rng);
  std::vector<float> out(q.size());
  session.decode_attention(0, q, kQueryHeads, out);
  return out;
}

// The host-span forms copy through device memory: the query up, the result down, one wait.
TEST_F(CountingBackendTest, HostSpanDecodeCopiesTheQueryUpAndTheResultDown) {
  Session counted = fp16_session(counting_, registry_);
  Session reference = fp16_session(cpu_backend(), registry_);
  append_tokens(counted);
  append_tokens(reference);

  counting_->reset_total_counts();
  const std::vector<float> out = decode_on_host(counted);
  const Counts expected{.uploads = 1, .downloads = 1, .copies = 0, .synchronizes = 1};
  EXPECT_EQ(counting_->total_counts(), expected);
  EXPECT_EQ(out, decode_on_host(reference));
}

// The module the registry loads: found only by its path, and never chosen by `auto`.
TEST(CountingBackendPlugin, LoadsByPathAndIsNeverChosenByAuto) {
  PluginRegistry registry;
  EXPECT_THROW(registry.make_backend_provider("test-counting"), PluginError);
  registry.load(COUNTING_BACKEND_PLUGIN);
  const std::shared_ptr<BackendProvider> provider = registry.make_backend_provider("test-counting");
  EXPECT_EQ(provider->availability().score, 1);
  ASSERT_EQ(provider->devices().size(), 1u);
  EXPECT_THAT(provider->devices()[0].name, HasSubstr("test-counting"));

  const std::string plugin_paths = "plugin_paths = [\"" COUNTING_BACKEND_PLUGIN "\"]\n";
  const Engine automatic(parse_config("[engine]\nbackend = \"auto\"\n" + plugin_paths, "a.toml"));
  EXPECT_EQ(automatic.backend()->name(), "cpu");

  // Named, it runs behind the registry's guards as it does linked in.
  const Engine named(parse_config(
      "[engine]\nbackend = \"test-counting\"\nplanner = \"uniform\"\nscorer = \"bm25\"\n" +
          plugin_paths,
      "named.toml"));
  ASSERT_EQ(named.backend()->name(), "test-counting");
  Session session = named.new_session(kShape);
  Session reference = fp16_session(cpu_backend(), registry);
  append_tokens(session);
  append_tokens(reference);
  EXPECT_EQ(decode_on_host(session), decode_on_host(reference));
}

}  // namespace
}  // namespace cocktail::testing
