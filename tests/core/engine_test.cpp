#include "cocktail/engine.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cocktail/config.hpp"
#include "cocktail/error.hpp"
#include "cocktail/text_pieces.hpp"
#include "expect_config_error.hpp"
#include "support/decode_tolerance.hpp"
#include "support/error_of.hpp"
#include "support/random_kv.hpp"

namespace cocktail {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int kContextTokens = 200;
constexpr int kQueryTokens = 5;
constexpr int kChunkSize = 32;  // the cocktail and recency planners' default
constexpr int kQHeads = 4;      // two query heads per KV head (GQA)
constexpr const char* kQuery = "saffron glacier tungsten meridian lantern";  // 5 words
const KvShape kShape{2, 2, 64};

Config config_of(const std::string& toml, const std::vector<std::string>& overrides = {}) {
  return parse_config(toml, "engine_test.toml", overrides);
}

using testing::error_of;
using testing::random_floats;

// 200 filler words, except words 96..127 (the fourth chunk of 32) which repeat the query's.
std::string context_text() {
  // With a space in front, every query word is a piece of the same shape as a filler word.
  const std::vector<std::string> query_words = split_word_pieces(std::string(" ") + kQuery);
  std::string text;
  for (int i = 0; i < kContextTokens; ++i) {
    const bool in_query_chunk = i >= 3 * kChunkSize && i < 4 * kChunkSize;
    text += in_query_chunk ? query_words[std::size_t(i) % query_words.size()]
                           : " filler" + std::to_string(i);
  }
  return text;
}

void append_random(Session& session, std::int64_t n, std::mt19937& rng) {
  testing::append_random(session, kShape, n, rng);
}

// Context and query K/V appended, then the context planned and committed.
const Plan& prefill_and_commit(Session& session, std::mt19937& rng) {
  append_random(session, kContextTokens, rng);
  append_random(session, kQueryTokens, rng);
  return session.plan_and_commit(split_word_pieces(context_text()), kQuery);
}

// One KV head's rows sorted back into token order; a test failure unless they are exactly the
// tokens 0..n-1.
KvHeadSnapshot in_token_order(const KvHeadSnapshot& snapshot, std::size_t dim) {
  std::vector<std::size_t> order(snapshot.positions.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return snapshot.positions[a] < snapshot.positions[b];
  });
  KvHeadSnapshot sorted;
  for (std::size_t row : order) {
    EXPECT_EQ(snapshot.positions[row], std::int64_t(sorted.positions.size()));
    sorted.positions.push_back(snapshot.positions[row]);
    const auto first = std::ptrdiff_t(row * dim);
    const auto last = first + std::ptrdiff_t(dim);
    sorted.keys.insert(sorted.keys.end(), snapshot.keys.begin() + first,
                       snapshot.keys.begin() + last);
    sorted.values.insert(sorted.values.end(), snapshot.values.begin() + first,
                         snapshot.values.begin() + last);
  }
  return sorted;
}

// Softmax attention of one query head in float64 over the dequantized rows.
std::vector<double> reference_attention(const KvHeadSnapshot& rows, const float* q, std::size_t dim,
                                        double scale) {
  const std::size_t n = rows.positions.size();
  std::vector<double> logits(n);
  for (std::size_t t = 0; t < n; ++t) {
    double dot = 0.0;
    for (std::size_t i = 0; i < dim; ++i) dot += double(q[i]) * rows.keys[t * dim + i];
    logits[t] = dot * scale;
  }
  const double max = *std::max_element(logits.begin(), logits.end());
  std::vector<double> out(dim, 0.0);
  double sum = 0.0;
  for (std::size_t t = 0; t < n; ++t) {
    const double w = std::exp(logits[t] - max);
    sum += w;
    for (std::size_t i = 0; i < dim; ++i) out[i] += w * rows.values[t * dim + i];
  }
  for (double& x : out) x /= sum;
  return out;
}

double relative_error(const float* got, const std::vector<double>& want) {
  double diff = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(diff / norm);
}

// Decode attention of every layer against float64 attention over the store's own contents, so
// it checks the kernels and the reordering, not the quantization error.
void expect_decode_matches_reference(Session& session, std::mt19937& rng) {
  const std::size_t dim = std::size_t(kShape.head_dim);
  const int group = kQHeads / kShape.n_kv_heads;
  for (int layer = 0; layer < kShape.n_layers; ++layer) {
    const std::vector<float> q = random_floats(kQHeads * dim, rng);
    std::vector<float> out(q.size());
    session.decode_attention(layer, q, kQHeads, out);
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float x) { return std::isfinite(x); }));
    for (int h = 0; h < kQHeads; ++h) {
      const KvHeadSnapshot rows = in_token_order(session.store().snapshot(layer, h / group), dim);
      ASSERT_EQ(rows.positions.size(), std::size_t(session.store().n_tokens()));
      const std::vector<double> want =
          reference_attention(rows, q.data() + h * dim, dim, session.softmax_scale());
      EXPECT_LT(relative_error(out.data() + h * dim, want),
                testing::decode_tolerance(session.store(), 1e-5))
          << "layer " << layer << ", query head " << h;
    }
  }
}

std::int64_t tokens_at(const KvStore& store, Precision p) {
  std::int64_t n = 0;
  for (const SegmentInfo& s : store.segments()) {
    if (s.precision == p) n += s.n_tokens;
  }
  return n;
}

TEST(EngineTest, EmptyConfigPicksTheCpuBackendAndTheDefaultPlugins) {
  const Engine engine(config_of(""));
  EXPECT_EQ(engine.settings().backend, "auto");
  EXPECT_EQ(engine.backend()->name(), "cpu");
  EXPECT_EQ(engine.planner().name(), "budget");
  EXPECT_EQ(engine.scorer().name(), "attention");
}

TEST(EngineTest, UnknownBackendListsTheAvailableOnes) {
  const Config config = config_of("[engine]\nbackend = \"warp-drive\"\n");
  EXPECT_THAT(error_of<PluginError>([&] { const Engine engine(config); }),
              AllOf(HasSubstr("'warp-drive'"), HasSubstr("found: cpu")));
}

TEST(EngineTest, BadPlannerValueIsAConfigErrorNamingFileLineAndKey) {
  const Config config = config_of("[planner.cocktail]\nalpha = 2.0\n");
  EXPECT_TRUE(testing::throws_config_error([&] { const Engine engine(config); },
                                           {"engine_test.toml:2", "planner.cocktail.alpha"}));
}

TEST(EngineTest, TableForAPlannerThatDoesNotExistIsAnError) {
  const Config config = config_of("[planner.nope]\nx = 1\n");
  EXPECT_THAT(error_of<Error>([&] { const Engine engine(config); }),
              AllOf(HasSubstr("engine_test.toml:1"), HasSubstr("[planner.nope]"),
                    HasSubstr("not found"), HasSubstr("found: budget cocktail recency uniform")));
}

TEST(EngineTest, PlansQuantizesAndAttendsEndToEnd) {
  // BM25 scores the words of the text; the default attention scorer would need a model run.
  const Engine engine(config_of("[engine]\nplanner = \"cocktail\"\nscorer = \"bm25\"\n"));
  Session session = engine.new_session(kShape);
  std::mt19937 rng(42);
  const Plan& plan = prefill_and_commit(session, rng);

  // Six full chunks, then the 8-token remainder, which stays FP16 unscored.
  EXPECT_EQ(plan.n_tokens(), kContextTokens);
  ASSERT_EQ(plan.chunks.size(), 7u);
  for (int c = 0; c < 6; ++c) {
    EXPECT_EQ(plan.chunks[std::size_t(c)].n_tokens, kChunkSize) << "chunk " << c;
    // Only the chunk holding the query words keeps full precision.
    EXPECT_EQ(plan.chunks[std::size_t(c)].precision == Precision::fp16, c == 3) << "chunk " << c;
  }
  EXPECT_EQ(plan.chunks[6].first_token, 6 * kChunkSize);
  EXPECT_EQ(plan.chunks[6].n_tokens, 8);
  EXPECT_EQ(plan.chunks[6].precision, Precision::fp16);

  const KvStore& store = session.store();
  EXPECT_EQ(store.plan().n_tokens(), kContextTokens);
  // The 8-token FP16 remainder stays in the tail, unpadded; the full chunks are in segments.
  EXPECT_EQ(store.n_committed(), 6 * kChunkSize);
  EXPECT_EQ(store.n_tokens(), kContextTokens + kQueryTokens);
  EXPECT_LT(store.bytes(), kShape.fp16_bytes(kContextTokens + kQueryTokens));
  expect_decode_matches_reference(session, rng);
}

TEST(EngineTest, RecencyPlannerFromOverridesAgesTokensAsDecodingGoesOn) {
  constexpr std::int64_t kRecent = 64;
  constexpr std::int64_t kInt8 = 128;
  const Engine engine(config_of(
      "", {"engine.planner=recency", "planner.recency.recent_tokens=" + std::to_string(kRecent),
           "planner.recency.int8_tokens=" + std::to_string(kInt8)}));
  ASSERT_EQ(engine.planner().name(), "recency");
  Session session = engine.new_session(kShape);
  std::mt19937 rng(7);
  prefill_and_commit(session, rng);
  const KvStore& store = session.store();
  const std::int64_t int4_after_prefill = tokens_at(store, Precision::int4);
  std::int64_t most_int8 = 0;

  for (int step = 0; step < 100; ++step) {
    append_random(session, 1, rng);
    std::int64_t stored = 0;
    for (const SegmentInfo& s : store.segments()) stored += s.n_tokens;
    ASSERT_EQ(stored, store.n_tokens()) << "step " << step;
    EXPECT_LE(tokens_at(store, Precision::int8), kInt8) << "step " << step;
    most_int8 = std::max(most_int8, tokens_at(store, Precision::int8));
    // The tail holds the recent window plus at most one chunk still filling up.
    EXPECT_LE(store.n_tokens() - store.n_committed(), kRecent + kChunkSize) << "step " << step;
  }
  EXPECT_GT(most_int8, 0);  // tokens passed through INT8 on their way to INT4
  EXPECT_GT(tokens_at(store, Precision::int4), int4_after_prefill);
  expect_decode_matches_reference(session, rng);
}

// A host with its own transformer hands the session its own memory and queue, wrapped without a
// copy: its K/V go in and the attention lands in its own array, the same numbers as the
// host-span forms give after their copies.
TEST(EngineTest, AHostsOwnMemoryAndStreamAreWrappedWithoutACopy) {
  const Engine engine(config_of("[engine]\nplanner = \"cocktail\"\nscorer = \"bm25\"\n"));
  Backend& backend = *engine.backend();
  Session wrapped = engine.new_session(kShape);
  Session copied = engine.new_session(kShape);
  wrapped.use_stream(backend.wrap_stream(nullptr));
  std::mt19937 rng(3);
  const std::int64_t tokens = kContextTokens + kQueryTokens;
  const auto width = std::int64_t(kShape.token_floats());
  for (int layer = 0; layer < kShape.n_layers; ++layer) {
    // The host's own arrays, which it keeps alive while the session reads them.
    std::vector<float> k = random_floats(std::size_t(tokens * width), rng);
    std::vector<float> v = random_floats(k.size(), rng);
    const std::shared_ptr<Buffer> k_memory = backend.wrap_memory(k.data(), k.size() * 4);
    const std::shared_ptr<Buffer> v_memory = backend.wrap_memory(v.data(), v.size() * 4);
    wrapped.append(layer, Tensor{k_memory.get(), 0, ElementType::f32, tokens, width},
                   Tensor{v_memory.get(), 0, ElementType::f32, tokens, width});
    copied.append(layer, k, v, tokens);
  }
  const std::vector<std::string> texts = split_word_pieces(context_text());
  wrapped.plan_and_commit(texts, kQuery);
  copied.plan_and_commit(texts, kQuery);
  EXPECT_EQ(wrapped.store().plan().storage_order(), copied.store().plan().storage_order());
  EXPECT_EQ(wrapped.store().bytes(), copied.store().bytes());

  const std::vector<float> q = random_floats(std::size_t(kQHeads * kShape.head_dim), rng);
  std::vector<float> q_own = q, out_own(q.size(), NAN), out_copied(q.size());
  const std::shared_ptr<Buffer> q_memory = backend.wrap_memory(q_own.data(), q_own.size() * 4);
  const std::shared_ptr<Buffer> out_memory =
      backend.wrap_memory(out_own.data(), out_own.size() * 4);
  const auto row = std::int64_t(q.size());
  for (int layer = 0; layer < kShape.n_layers; ++layer) {
    wrapped.decode_attention(layer, Tensor{q_memory.get(), 0, ElementType::f32, 1, row}, kQHeads,
                             Tensor{out_memory.get(), 0, ElementType::f32, 1, row});
    wrapped.stream().synchronize();
    copied.decode_attention(layer, q, kQHeads, out_copied);
    EXPECT_EQ(out_own, out_copied) << "layer " << layer;
  }
  EXPECT_THAT(error_of<Error>([&] { backend.wrap_stream(&rng); }),
              HasSubstr("wrap_stream takes null"));
}

}  // namespace
}  // namespace cocktail
