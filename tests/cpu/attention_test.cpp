// Reordered mixed-precision attention against a float64 reference computed in the original
// token order on the dequantized values (the store's own snapshot, sorted back by position).

#include "attention/attention.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "attention/tile_kernels.hpp"
#include "cocktail/error.hpp"
#include "kv_store.hpp"
#include "support/random_kv.hpp"
#include "support/simd_targets.hpp"

namespace cocktail::cpu {
namespace {

using cocktail::testing::random_floats;

struct Mix {
  double fp16, int4, int2;  // fractions of chunks; the rest goes to int8 and nf4 alternately
};

// Fills a store with n_tokens random tokens in every layer; keys get an outlier channel, as
// real keys do, so per-channel and per-token grouping differ.
std::vector<std::vector<float>> fill(CpuKvStore& store, std::int64_t n_tokens, std::mt19937& rng) {
  const KvShape& s = store.options().shape;
  std::vector<std::vector<float>> kv;
  for (int layer = 0; layer < s.n_layers; ++layer) {
    auto k = random_floats(std::size_t(n_tokens) * s.token_floats(), rng);
    auto v = random_floats(k.size(), rng, 0.5f);
    for (std::size_t i = 3; i < k.size(); i += std::size_t(s.head_dim)) k[i] *= 8.0f;
    store.append(layer, k, v, n_tokens);
    kv.push_back(std::move(k));
    kv.push_back(std::move(v));
  }
  return kv;
}

Plan make_plan(std::int64_t n_context, int chunk, Mix mix, std::mt19937& rng) {
  Plan plan;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int other = 0;
  for (std::int64_t first = 0; first < n_context; first += chunk) {
    ChunkPlan c;
    c.index = int(plan.chunks.size());
    c.first_token = first;
    c.n_tokens = int(std::min<std::int64_t>(chunk, n_context - first));
    const double r = u(rng);
    if (c.n_tokens < chunk || r < mix.fp16)
      c.precision = Precision::fp16;
    else if (r < mix.fp16 + mix.int4)
      c.precision = Precision::int4;
    else if (r < mix.fp16 + mix.int4 + mix.int2)
      c.precision = Precision::int2;
    else
      c.precision = (other++ % 2) ? Precision::nf4 : Precision::int8;
    plan.chunks.push_back(c);
  }
  return plan;
}

// Exact attention in float64 over rows sorted back into token order.
std::vector<double> reference(const KvHeadSnapshot& snap, const float* q, int dim, float scale,
                              std::int64_t visible) {
  std::vector<std::size_t> order(snap.positions.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return snap.positions[a] < snap.positions[b]; });
  std::vector<double> scores;
  for (std::size_t r : order) {
    if (snap.positions[r] >= visible) break;
    double dot = 0.0;
    for (int d = 0; d < dim; ++d)
      dot += double(q[d]) * snap.keys[r * std::size_t(dim) + std::size_t(d)];
    scores.push_back(dot * scale);
  }
  const double m = *std::max_element(scores.begin(), scores.end());
  double sum = 0.0;
  std::vector<double> out(std::size_t(dim), 0.0);
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const double p = std::exp(scores[i] - m);
    sum += p;
    for (int d = 0; d < dim; ++d)
      out[std::size_t(d)] += p * snap.values[order[i] * std::size_t(dim) + std::size_t(d)];
  }
  for (double& x : out) x /= sum;
  return out;
}

double relative_error(const float* got, const std::vector<double>& want) {
  double err = 0.0, norm = 0.0;
  for (std::size_t d = 0; d < want.size(); ++d) {
    err = std::max(err, std::abs(double(got[d]) - want[d]));
    norm = std::max(norm, std::abs(want[d]));
  }
  return err / norm;
}

struct Case {
  int kv_heads, gqa, dim;
  std::int64_t context, query;
  Mix mix;
  QuantAxis key_axis, value_axis;
  int threads;
  int group = 32;        // tokens a tile and a chunk
  float q_scale = 1.0f;  // spread of the query's entries
  double tolerance = 1e-5;
};

// The float lane dots are held to a test's own tolerance; the integer ones round the query and
// the probabilities to 16 bits, 2^-16 of a head's largest weight (set by the keys' outlier
// channel), which shows as up to 1e-3 over INT4 and INT2 tiles (the conformance suite's bound).
double tolerance(double float_tolerance, bool integer_codes) {
  return integer_codes && integer_lane_dots() ? std::max(float_tolerance, 2e-3) : float_tolerance;
}

void expect_decode_matches_reference(const Case& c) {
  std::mt19937 rng(1234 + unsigned(c.context) + unsigned(c.gqa));
  KvStoreOptions opt;
  opt.shape = {2, c.kv_heads, c.dim};
  opt.layout = {c.group, c.key_axis, c.value_axis};
  CpuKvStore store(opt);
  fill(store, c.context, rng);
  store.commit(make_plan(c.context, c.group, c.mix, rng));
  fill(store, c.query, rng);  // the FP16 tail

  CpuAttention attention(c.threads);
  const int q_heads = c.kv_heads * c.gqa;
  const float scale = 1.0f / std::sqrt(float(c.dim));
  for (int layer = 0; layer < 2; ++layer) {
    const auto q = random_floats(std::size_t(q_heads * c.dim), rng, c.q_scale);
    std::vector<float> out(q.size());
    attention.decode(store, layer, q, q_heads, scale, out);
    for (int h = 0; h < q_heads; ++h) {
      const auto snap = store.snapshot(layer, h / c.gqa);
      const auto want = reference(snap, q.data() + h * c.dim, c.dim, scale, c.context + c.query);
      EXPECT_LT(relative_error(out.data() + h * c.dim, want),
                tolerance(c.tolerance, c.mix.int4 > 0.0 || c.mix.int2 > 0.0))
          << "layer " << layer << " head " << h << " context " << c.context;
    }
  }
}

constexpr Mix kPaperMix{0.1, 0.3, 0.6};
constexpr Mix kEveryPrecision{0.2, 0.2, 0.2};
constexpr QuantAxis kCh = QuantAxis::per_channel;
constexpr QuantAxis kTok = QuantAxis::per_token;

TEST(CpuAttention, MixedCacheMatchesReferenceGqa1) {
  expect_decode_matches_reference({2, 1, 128, 1000, 5, kPaperMix, kCh, kTok, 2});
}
TEST(CpuAttention, MixedCacheMatchesReferenceGqa4) {
  expect_decode_matches_reference({2, 4, 64, 517, 3, kPaperMix, kCh, kTok, 2});
}
TEST(CpuAttention, EveryPrecisionGqa3) {  // one batch of 3 heads
  expect_decode_matches_reference({1, 3, 128, 777, 1, kEveryPrecision, kCh, kTok, 1});
}
TEST(CpuAttention, GqaGroupOf7) {  // batches of 4 and 3
  expect_decode_matches_reference({1, 7, 64, 333, 4, kEveryPrecision, kTok, kTok, 2});
}
TEST(CpuAttention, GqaGroupOf12) {  // batches of 8 and 4
  expect_decode_matches_reference({1, 12, 64, 300, 2, kEveryPrecision, kCh, kTok, 2});
}
TEST(CpuAttention, KeysPerTokenValuesPerChannel) {
  expect_decode_matches_reference({2, 2, 128, 450, 7, kEveryPrecision, kTok, kCh, 2});
}
TEST(CpuAttention, SmolLm2ShapeSplitsHeadsAcrossTwoThreads) {  // 3 KV heads, 6 ranges
  expect_decode_matches_reference({3, 3, 64, 2000, 20, kPaperMix, kCh, kTok, 2});
}
TEST(CpuAttention, LongSingleHeadSplitsAcrossThreads) {
  expect_decode_matches_reference({1, 1, 128, 4100, 1, kPaperMix, kCh, kTok, 4});
}
// Tiles of 64 tokens: four rows of lane units in each INT4 / INT2 key tile.
TEST(CpuAttention, TilesOf64Tokens) {
  expect_decode_matches_reference({2, 2, 64, 700, 3, kPaperMix, kCh, kTok, 2, 64});
}

// A query this large spreads the logits over about ±1000, so most tiles' probabilities
// underflow to exactly zero: their value weights are all zero and must add nothing. Float32
// logits that large carry rounding errors near 1e-4 of their own, hence the tolerance. GQA 1,
// so that each lane dot serves a lone head.
TEST(CpuAttention, WholeTilesOfZeroProbability) {
  expect_decode_matches_reference({2, 1, 128, 600, 1, kPaperMix, kCh, kTok, 2, 32, 300.0f, 1e-3});
}

// The integer lane dots' worst case: 1024 channels of INT4 keys nearly all at the top code,
// dotted with a query whose every folded weight rounds to the largest int16. The upper plane of
// a pair is worth code·2^bits in its sum, so the rounding must leave room for that
// (quantize_row_pairs); too fine a rounding wraps the int32 sums of the tokens at the top code,
// which would move their scores and the output. Every target runs it.
TEST(CpuAttention, WideHeadsKeepTheIntegerSumsInRange) {
  constexpr int kDim = 1024;
  constexpr std::int64_t kTokens = 256;
  KvStoreOptions opt;
  opt.shape = {1, 1, kDim};
  opt.layout = {32, kCh, kTok};
  std::mt19937 rng(7);
  std::vector<float> k(std::size_t(kTokens) * kDim);
  for (std::int64_t t = 0; t < kTokens; ++t) {
    for (int c = 0; c < kDim; ++c) {
      // Each tile's channel spans 0 (its first token) to 1; every third token is at 0 in half
      // of the channels, so that its sums stay in range where the others' would wrap.
      const bool low = t % 32 == 0 || (t % 3 == 0 && c % 2 == 0);
      k[std::size_t(t) * kDim + std::size_t(c)] = low ? 0.0f : 1.0f;
    }
  }
  const auto v = random_floats(k.size(), rng, 0.5f);
  const std::vector<float> q(kDim, 1.0f);
  testing::for_each_simd_target([&](std::int64_t) {
    CpuKvStore store(opt);
    store.append(0, k, v, kTokens);
    store.commit(make_plan(kTokens, 32, {0.0, 1.0, 0.0}, rng));
    std::vector<float> out(kDim);
    const float scale = 1.0f / std::sqrt(float(kDim));
    CpuAttention(1).decode(store, 0, q, 1, scale, out);
    const auto want = reference(store.snapshot(0, 0), q.data(), kDim, scale, kTokens);
    EXPECT_LT(relative_error(out.data(), want), tolerance(1e-5, true));
  });
}

// Every SIMD target this CPU runs matches the reference, not only the best one: the targets
// differ in vector width, which changes how many vectors a lane unit's 16 columns take.
TEST(CpuAttention, EverySupportedSimdTarget) {
  testing::for_each_simd_target([](std::int64_t) {
    expect_decode_matches_reference({1, 3, 128, 300, 2, kEveryPrecision, kCh, kTok, 1});
    expect_decode_matches_reference({1, 1, 64, 200, 1, kPaperMix, kCh, kTok, 1});
  });
}

TEST(CpuAttention, OnlyTheTail) {
  expect_decode_matches_reference({2, 2, 64, 0, 45, kPaperMix, kCh, kTok, 2});
}

TEST(CpuAttention, Fp16StoreEqualsExactAttention) {
  std::mt19937 rng(7);
  KvStoreOptions opt;
  opt.shape = {1, 2, 64};
  CpuKvStore store(opt);
  const auto kv = fill(store, 333, rng);
  store.commit(make_plan(333, 32, {1.0, 0.0, 0.0}, rng));
  CpuAttention attention(2);
  const auto q = random_floats(2 * 64, rng);
  std::vector<float> out(q.size());
  const float scale = 0.125f;
  attention.decode(store, 0, q, 2, scale, out);
  for (int h = 0; h < 2; ++h) {
    // The exact inputs, in token order, rounded to FP16 as the store keeps them.
    KvHeadSnapshot exact;
    for (std::int64_t t = 0; t < 333; ++t) {
      exact.positions.push_back(t);
      for (int d = 0; d < 64; ++d) {
        const std::size_t i = std::size_t(t) * 128 + std::size_t(h * 64 + d);
        exact.keys.push_back(f32_from_f16_bits(f16_bits_from_f32(kv[0][i])));
        exact.values.push_back(f32_from_f16_bits(f16_bits_from_f32(kv[1][i])));
      }
    }
    const auto want = reference(exact, q.data() + h * 64, 64, scale, 333);
    EXPECT_LT(relative_error(out.data() + h * 64, want), 1e-5);
  }
}

// One plan runs every layer of a step and gives what a plan per layer gives; once the store
// grows or commits, the old plan is refused instead of reading a layout that is gone.
TEST(CpuAttention, OnePlanPerStepAndAStalePlanIsRefused) {
  std::mt19937 rng(8);
  KvStoreOptions opt;
  opt.shape = {3, 2, 64};
  CpuKvStore store(opt);
  fill(store, 200, rng);
  store.commit(make_plan(160, 32, kEveryPrecision, rng));
  CpuAttention attention(2);
  const auto q = random_floats(4 * 64, rng);
  std::vector<float> shared(q.size()), alone(q.size());
  CpuDecodePlan plan(store, 4, 2);
  for (int layer = 0; layer < 3; ++layer) {
    attention.decode(plan, store, layer, q, 0.125f, shared);
    attention.decode(store, layer, q, 4, 0.125f, alone);
    EXPECT_EQ(shared, alone) << "layer " << layer;
  }
  store.append(0, random_floats(128, rng), random_floats(128, rng), 1);
  EXPECT_THROW(attention.decode(plan, store, 0, q, 0.125f, shared), Error);
  CpuDecodePlan next(store, 4, 2);
  attention.decode(next, store, 0, q, 0.125f, shared);  // layer 0 holds the step's token
  EXPECT_THROW(attention.decode(next, store, 1, q, 0.125f, shared), Error);  // layer 1 does not
  store.append(1, random_floats(128, rng), random_floats(128, rng), 1);
  store.append(2, random_floats(128, rng), random_floats(128, rng), 1);
  Plan longer = store.plan();
  longer.chunks.push_back({5, 160, 32, NAN, Precision::int4});
  store.commit(longer);
  EXPECT_THROW(attention.decode(next, store, 0, q, 0.125f, shared), Error);
}

struct PrefillCase {
  int kv_heads, gqa, dim;
  std::int64_t committed;  // tokens planned and committed before the prefill (mixed precision)
  std::int64_t earlier;    // uncommitted tokens appended by an earlier prefill block
  std::int64_t n_new;      // tokens of this prefill block
  int threads;
};

// Causal prefill of n_new tokens after `committed` + `earlier` ones: query i sees every token
// before it and itself.
void expect_prefill_matches_reference(const PrefillCase& c) {
  std::mt19937 rng(17 + unsigned(c.n_new) + unsigned(c.dim));
  KvStoreOptions opt;
  opt.shape = {1, c.kv_heads, c.dim};
  CpuKvStore store(opt);
  if (c.committed > 0) {
    fill(store, c.committed, rng);
    store.commit(make_plan(c.committed, 32, kEveryPrecision, rng));
  }
  fill(store, c.earlier + c.n_new, rng);
  CpuAttention attention(c.threads);
  const int q_heads = c.kv_heads * c.gqa;
  const float scale = 1.0f / std::sqrt(float(c.dim));
  const auto q = random_floats(std::size_t(c.n_new * q_heads * c.dim), rng);
  std::vector<float> out(q.size());
  attention.prefill(store, 0, q, c.n_new, q_heads, scale, out);
  const std::int64_t before = c.committed + c.earlier;
  for (std::int64_t i = 0; i < c.n_new; i += std::max<std::int64_t>(1, c.n_new / 7)) {
    for (int h = 0; h < q_heads; ++h) {
      const std::size_t at = (std::size_t(i) * std::size_t(q_heads) + std::size_t(h)) * c.dim;
      const auto want =
          reference(store.snapshot(0, h / c.gqa), q.data() + at, c.dim, scale, before + i + 1);
      EXPECT_LT(relative_error(out.data() + at, want), tolerance(1e-5, c.committed > 0))
          << "token " << i << " head " << h;
    }
  }
}

TEST(CpuAttention, CausalPrefillMatchesReference) {
  expect_prefill_matches_reference({2, 2, 64, 0, 0, 70, 2});
}
TEST(CpuAttention, PrefillBlocksAndKeyTilesCrossTheDiagonal) {  // 3 query blocks, GQA 3
  expect_prefill_matches_reference({1, 3, 64, 0, 0, 150, 2});
}
TEST(CpuAttention, LaterPrefillBlockSeesTheEarlierOnes) {
  expect_prefill_matches_reference({2, 1, 128, 0, 100, 37, 2});
}
TEST(CpuAttention, PrefillAfterACommitSeesTheSegments) {
  expect_prefill_matches_reference({2, 2, 64, 96, 5, 40, 2});
}
TEST(CpuAttention, PrefillHeadOfSixVectors) {  // value chunks of 4 and 2 vectors
  expect_prefill_matches_reference({1, 2, 96, 0, 3, 66, 1});
}

// The query's attention mass: per query head, the softmax weights of the last n_query tokens'
// queries over the tokens up to each, summed, against a float64 reference.
TEST(CpuAttention, AttentionMassMatchesReference) {
  std::mt19937 rng(29);
  const int kv_heads = 2, gqa = 3, dim = 64, q_heads = kv_heads * gqa;
  const std::int64_t n = 300, n_query = 9;
  KvStoreOptions opt;
  opt.shape = {2, kv_heads, dim};
  CpuKvStore store(opt);
  fill(store, n, rng);
  CpuAttention attention(2);
  const float scale = 1.0f / std::sqrt(float(dim));
  const auto q = random_floats(std::size_t(n_query * q_heads * dim), rng);
  std::vector<float> mass(std::size_t(q_heads * n));
  attention.attention_mass(store, 1, q, n_query, q_heads, scale, mass);
  for (int h = 0; h < q_heads; ++h) {
    const KvHeadSnapshot snap = store.snapshot(1, h / gqa);
    std::vector<double> want(std::size_t(n), 0.0);
    for (std::int64_t i = 0; i < n_query; ++i) {
      const float* qi = q.data() + (i * q_heads + h) * dim;
      const std::int64_t visible = n - n_query + i + 1;
      std::vector<double> s(static_cast<std::size_t>(visible));
      for (std::int64_t t = 0; t < visible; ++t) {
        for (int d = 0; d < dim; ++d) s[t] += double(qi[d]) * snap.keys[t * dim + d] * scale;
      }
      const double max = *std::max_element(s.begin(), s.end());
      double sum = 0.0;
      for (double& x : s) sum += x = std::exp(x - max);
      for (std::int64_t t = 0; t < visible; ++t) want[t] += s[t] / sum;
    }
    double total = 0.0;
    for (std::int64_t t = 0; t < n; ++t) {
      EXPECT_NEAR(mass[h * n + t], want[t], 1e-5 * std::max(1.0, want[t])) << h << " " << t;
      total += mass[h * n + t];
    }
    EXPECT_NEAR(total, double(n_query), 1e-4);  // each query's weights sum to one
  }
  std::vector<float> wrong(5);
  EXPECT_THROW(attention.attention_mass(store, 1, q, n_query, q_heads, scale, wrong), Error);
  store.commit(make_plan(n, 32, kEveryPrecision, rng));
  EXPECT_THROW(attention.attention_mass(store, 1, q, n_query, q_heads, scale, mass), Error);
}

TEST(CpuKvStore, BytesAreExactAndTailGrowsWithoutTouchingSegments) {
  std::mt19937 rng(3);
  KvStoreOptions opt;
  opt.shape = {2, 2, 128};
  CpuKvStore store(opt);
  fill(store, 96, rng);
  Plan plan = make_plan(96, 32, {0.0, 0.0, 1.0}, rng);  // three INT2 chunks
  store.commit(plan);
  // INT2 tile: K codes 32·128/4 + per-channel scale and zero (2·128·2); V codes 1024 + per-token
  // scale and zero for 4 groups of 32 tokens (2·32·4·2).
  const std::size_t tile = 1024 + 512 + 1024 + 512;
  EXPECT_EQ(store.bytes(), 3 * tile * 2 * 2);
  const auto segment_before = store.view(0, 0).segments[0].data;
  fill(store, 1000, rng);
  EXPECT_EQ(store.view(0, 0).segments[0].data, segment_before);
  EXPECT_EQ(store.bytes(), 3 * tile * 2 * 2 + std::size_t(1000) * 2 * 2 * 128 * 2 * 2);
}

TEST(CpuKvStore, ShortFp16RemainderStaysInTheTailAtItsExactSize) {
  std::mt19937 rng(9);
  KvStoreOptions opt;
  opt.shape = {1, 1, 64};
  CpuKvStore store(opt);
  fill(store, 73, rng);
  Plan plan = make_plan(73, 32, {0.0, 0.0, 1.0}, rng);  // two INT2 chunks, a 9-token FP16 rest
  ASSERT_EQ(plan.chunks.back().n_tokens, 9);
  store.commit(plan);
  EXPECT_EQ(store.n_committed(), 64);
  const std::size_t int2_tile = 512 + 256 + 512 + 256;  // 32 x 64 codes, scales and zeros
  EXPECT_EQ(store.bytes(), 2 * int2_tile + 9 * 64 * 2 * 2);
}

TEST(CpuKvStore, LaterPlansOnlyLowerPrecisionFromFp16OrInt8) {
  std::mt19937 rng(5);
  KvStoreOptions opt;
  opt.shape = {1, 1, 64};
  CpuKvStore store(opt);
  fill(store, 128, rng);
  Plan plan = make_plan(64, 32, {1.0, 0.0, 0.0}, rng);
  plan.chunks[1].precision = Precision::int8;
  store.commit(plan);
  const auto int8_snapshot = store.snapshot(0, 0);

  Plan aged = make_plan(96, 32, {1.0, 0.0, 0.0}, rng);
  aged.chunks[1].precision = Precision::int4;  // int8 → int4, from the int8 form
  aged.chunks[2].precision = Precision::int8;  // from the tail
  store.commit(aged);
  EXPECT_EQ(store.n_committed(), 96);
  const auto snap = store.snapshot(0, 0);
  ASSERT_EQ(snap.positions.size(), 128u);

  Plan raise = aged;
  raise.chunks[1].precision = Precision::fp16;
  EXPECT_THROW(store.commit(raise), Error);
  Plan from_int4 = aged;
  from_int4.chunks[1].precision = Precision::int2;
  EXPECT_THROW(store.commit(from_int4), Error);
}

// A copy holds the same tokens and plan, goes on independently, and may take another layout
// while nothing is committed.
TEST(CpuKvStore, CloneIsIndependentAndMayChangeLayoutBeforeCommit) {
  std::mt19937 rng(31);
  KvStoreOptions opt;
  opt.shape = {2, 2, 64};
  CpuKvStore original(opt);
  fill(original, 100, rng);
  const Plan plan = make_plan(100, 32, kEveryPrecision, rng);

  KvQuantLayout per_token = opt.layout;
  per_token.key_axis = QuantAxis::per_token;
  const auto copy = std::dynamic_pointer_cast<CpuKvStore>(original.clone(per_token));
  KvStoreOptions direct_options = opt;
  direct_options.layout = per_token;
  CpuKvStore direct(direct_options);
  std::mt19937 same(31);
  fill(direct, 100, same);
  copy->commit(plan);
  direct.commit(plan);
  EXPECT_EQ(copy->options().layout, per_token);
  EXPECT_EQ(copy->bytes(), direct.bytes());
  EXPECT_EQ(copy->snapshot(1, 1).keys, direct.snapshot(1, 1).keys);
  EXPECT_EQ(original.n_committed(), 0);  // the original is untouched

  const auto committed_copy = std::dynamic_pointer_cast<CpuKvStore>(direct.clone(per_token));
  EXPECT_EQ(committed_copy->plan().storage_order(), direct.plan().storage_order());
  EXPECT_EQ(committed_copy->n_committed(), direct.n_committed());
  EXPECT_EQ(committed_copy->snapshot(0, 1).values, direct.snapshot(0, 1).values);
  committed_copy->append(0, random_floats(128, rng), random_floats(128, rng), 1);
  EXPECT_EQ(committed_copy->snapshot(0, 0).positions.size(), 101u);
  EXPECT_EQ(direct.snapshot(0, 0).positions.size(), 100u);
  EXPECT_THROW(direct.clone(opt.layout), Error);  // committed: the layout is fixed
}

TEST(CpuKvStore, BadInputIsAnError) {
  KvStoreOptions opt;
  opt.shape = {1, 1, 48};
  EXPECT_THROW(CpuKvStore{opt}, Error);  // head_dim not a multiple of 32
  opt.shape = {1, 1, 64};
  opt.max_tokens = 10;
  CpuKvStore store(opt);
  std::vector<float> kv(64 * 11);
  EXPECT_THROW(store.append(0, kv, kv, 11), Error);
  EXPECT_THROW(store.append(1, {}, {}, 0), Error);
  std::vector<float> q(64), out(64);
  EXPECT_THROW(CpuAttention(1).decode(store, 1, q, 1, 0.125f, out), Error);  // no layer 1
  Plan too_long;
  too_long.chunks.push_back({0, 0, 32, 0.0, Precision::int4});
  EXPECT_THROW(store.commit(too_long), Error);
}

}  // namespace
}  // namespace cocktail::cpu
