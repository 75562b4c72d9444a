// AttentionExecutor conformance: decode over every precision mix, GQA group and head size,
// causal prefill and the query's attention mass, each against float64 softmax attention over
// the store's own snapshot (its dequantized rows sorted back into token order).

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cocktail/attention_executor.hpp"
#include "cocktail/error.hpp"
#include "conformance.hpp"
#include "reference.hpp"
#include "support/decode_tolerance.hpp"
#include "support/random_kv.hpp"

namespace cocktail::conformance {
namespace {

// Softmax attention in float32 over a few hundred tokens stays well inside this.
constexpr double kTolerance = 1e-4;
constexpr int kChunkLengths[] = {32, 64, 48, 32};  // a 48-token chunk ends inside a tile
constexpr Precision kMixed[] = {Precision::int4, Precision::fp16, Precision::int2,
                                Precision::int8, Precision::nf4,  Precision::int2};

float softmax_scale(int head_dim) {
  return 1.0f / std::sqrt(float(head_dim));
}

std::string describe(const KvStore& store, int gqa) {
  const KvQuantLayout& l = store.options().layout;
  std::string precisions;
  for (const Precision p : kAllPrecisions) {
    if (store.plan().tokens_at(p) > 0) precisions += std::string(to_string(p)) + " ";
  }
  return precisions + "head_dim " + std::to_string(store.options().shape.head_dim) + ", GQA " +
         std::to_string(gqa) + ", keys per-" + std::string(to_string(l.key_axis)) +
         ", values per-" + std::string(to_string(l.value_axis)) + ", groups of " +
         std::to_string(l.group_size) + ", " + std::string(to_string(l.range));
}

class AttentionConformance : public BackendTest {
 protected:
  // A store of `shape` whose first n_context tokens are committed as a scattered plan of
  // `precisions` (ending in an FP16 remainder when n_context does not fill its last chunk),
  // with n_tail more tokens in the FP16 tail.
  std::shared_ptr<KvStore> mixed_store(const KvShape& shape, const KvQuantLayout& layout,
                                       std::int64_t n_context,
                                       std::span<const Precision> precisions, std::int64_t n_tail,
                                       std::mt19937& rng) const {
    std::shared_ptr<KvStore> store = backend().make_kv_store({shape, layout, 0});
    append_random(*store, n_context, rng);
    if (n_context > 0) commit(*store, scattered_plan(n_context, kChunkLengths, precisions));
    append_random(*store, n_tail, rng);
    return store;
  }

  // One decode run of `layer` with `plan`, for random queries; returns the queries and output.
  struct Decoded {
    std::vector<float> q, out;
  };
  Decoded decode(AttentionExecutor& attention, DecodePlan& plan, const KvStore& store, int layer,
                 int n_q_heads, std::mt19937& rng) const {
    const int dim = store.options().shape.head_dim;
    const std::int64_t width = std::int64_t(n_q_heads) * dim;
    Decoded d{testing::random_floats(std::size_t(width), rng), {}};
    const DeviceRows q = to_device(d.q, 1, width);
    const DeviceRows out = device_floats(1, width);
    attention.decode(stream(), plan, store, layer, q.tensor, softmax_scale(dim), out.tensor);
    d.out = read_back(out.tensor);
    return d;
  }

  // Plans a decode step over `store` once and runs it for every layer: each query head's output
  // must be the reference over its KV head's snapshot.
  void expect_decode_matches_reference(AttentionExecutor& attention, const KvStore& store, int gqa,
                                       std::mt19937& rng) const {
    SCOPED_TRACE(describe(store, gqa));
    const KvShape& shape = store.options().shape;
    const int n_q_heads = shape.n_kv_heads * gqa;
    const std::unique_ptr<DecodePlan> plan = attention.plan_decode(store, n_q_heads);
    for (int layer = 0; layer < shape.n_layers; ++layer) {
      const Decoded d = decode(attention, *plan, store, layer, n_q_heads, rng);
      expect_heads_match_reference(store, layer, gqa, d.q, d.out, store.n_tokens(),
                                   "layer " + std::to_string(layer));
    }
  }

  // Each query head h of one token's q and out ([n_q_heads · head_dim]) against the reference
  // over the first `visible` tokens of KV head h / gqa.
  static void expect_heads_match_reference(const KvStore& store, int layer, int gqa,
                                           std::span<const float> q, std::span<const float> out,
                                           std::int64_t visible, const std::string& where) {
    const int dim = store.options().shape.head_dim;
    const auto n_q_heads = int(q.size()) / dim;
    for (int kv_head = 0; kv_head < n_q_heads / gqa; ++kv_head) {
      const KvHeadSnapshot ordered = in_token_order(store.snapshot(layer, kv_head), dim);
      for (int h = kv_head * gqa; h < (kv_head + 1) * gqa; ++h) {
        const auto at = std::size_t(h * dim);
        const std::vector<double> want = attention_reference(
            ordered, q.subspan(at, std::size_t(dim)), softmax_scale(dim), visible);
        EXPECT_LT(relative_error(out.subspan(at, std::size_t(dim)), want),
                  testing::decode_tolerance(store, kTolerance))
            << where << ", query head " << h;
      }
    }
  }
};
COCKTAIL_CONFORMANCE_SUITE(AttentionConformance);

// Each precision alone and all of them scattered, head sizes 64 and 128, GQA groups of 1, 3, 4
// and 8: 333 committed tokens (chunks ending inside tiles, a 13-token FP16 remainder) and an
// FP16 tail of 4 more.
TEST_P(AttentionConformance, DecodeOverEveryPrecisionMixMatchesReference) {
  const std::vector<std::vector<Precision>> mixes = {
      {Precision::fp16}, {Precision::int8}, {Precision::nf4},
      {Precision::int4}, {Precision::int2}, {std::begin(kMixed), std::end(kMixed)}};
  const std::shared_ptr<AttentionExecutor> attention = backend().make_attention();
  std::mt19937 rng(21);
  for (const std::vector<Precision>& mix : mixes) {
    for (const int dim : {64, 128}) {
      const std::shared_ptr<KvStore> store = mixed_store({2, 2, dim}, {}, 333, mix, 4, rng);
      for (const int gqa : {1, 3, 4, 8}) {
        expect_decode_matches_reference(*attention, *store, gqa, rng);
      }
    }
  }
}

// The layouts other than the default: keys per token and values per channel, groups (tiles) of
// 64 tokens, least-squares ranges.
TEST_P(AttentionConformance, DecodeOverEveryLayoutMatchesReference) {
  const KvQuantLayout layouts[] = {
      {32, QuantAxis::per_token, QuantAxis::per_channel, RangeFit::min_max},
      {64, QuantAxis::per_channel, QuantAxis::per_token, RangeFit::min_max},
      {32, QuantAxis::per_channel, QuantAxis::per_token, RangeFit::least_squares}};
  const std::shared_ptr<AttentionExecutor> attention = backend().make_attention();
  std::mt19937 rng(22);
  for (const KvQuantLayout& layout : layouts) {
    const std::shared_ptr<KvStore> store = mixed_store({2, 2, 128}, layout, 333, kMixed, 4, rng);
    expect_decode_matches_reference(*attention, *store, 4, rng);
  }
}

// Only the tail: nothing committed yet.
TEST_P(AttentionConformance, DecodeOverTheTailAloneMatchesReference) {
  const std::shared_ptr<AttentionExecutor> attention = backend().make_attention();
  std::mt19937 rng(23);
  const std::shared_ptr<KvStore> store = mixed_store({2, 2, 64}, {}, 0, kMixed, 45, rng);
  expect_decode_matches_reference(*attention, *store, 3, rng);
}

// A decode plan fits the store it was made for: after another token, or a commit, running it
// is an Error, and a fresh plan gives the reference again.
TEST_P(AttentionConformance, StaleDecodePlanIsRefused) {
  const std::shared_ptr<AttentionExecutor> attention = backend().make_attention();
  std::mt19937 rng(24);
  const std::shared_ptr<KvStore> store = mixed_store({2, 2, 64}, {}, 200, kMixed, 40, rng);
  const int n_q_heads = 4;
  const std::unique_ptr<DecodePlan> before_append = attention->plan_decode(*store, n_q_heads);
  decode(*attention, *before_append, *store, 0, n_q_heads, rng);
  append_random(*store, 1, rng);
  EXPECT_THROW(decode(*attention, *before_append, *store, 0, n_q_heads, rng), Error);
  expect_decode_matches_reference(*attention, *store, 2, rng);

  const std::unique_ptr<DecodePlan> before_commit = attention->plan_decode(*store, n_q_heads);
  Plan longer = store->plan();
  longer.chunks.push_back({int(longer.chunks.size()), longer.n_tokens(), 32, 0.0, Precision::int4});
  commit(*store, longer);
  EXPECT_THROW(decode(*attention, *before_commit, *store, 1, n_q_heads, rng), Error);
  expect_decode_matches_reference(*attention, *store, 2, rng);
}

struct PrefillCase {
  int kv_heads, gqa, dim;
  std::int64_t committed;  // tokens committed (scattered precisions) before the prefill
  std::int64_t earlier;    // uncommitted tokens an earlier prefill block appended
  std::int64_t n_new;      // tokens of this block
};

// Causal prefill of n_new tokens: query i sits at position committed + earlier + i and sees
// every token up to itself, in the segments and the tail.
TEST_P(AttentionConformance, CausalPrefillMatchesReference) {
  const PrefillCase cases[] = {
      {2, 2, 64, 96, 5, 40}, {1, 3, 128, 0, 0, 70}, {2, 1, 64, 0, 37, 20}, {1, 4, 128, 160, 0, 9}};
  const std::shared_ptr<AttentionExecutor> attention = backend().make_attention();
  std::mt19937 rng(25);
  for (const PrefillCase& c : cases) {
    const std::shared_ptr<KvStore> store =
        mixed_store({1, c.kv_heads, c.dim}, {}, c.committed, kMixed, c.earlier + c.n_new, rng);
    SCOPED_TRACE(describe(*store, c.gqa) + ", " + std::to_string(c.n_new) + " new tokens after " +
                 std::to_string(c.committed + c.earlier));
    const int n_q_heads = c.kv_heads * c.gqa;
    const std::int64_t width = std::int64_t(n_q_heads) * c.dim;
    const std::vector<float> q = testing::random_floats(std::size_t(c.n_new * width), rng);
    const DeviceRows q_device = to_device(q, c.n_new, width);
    const DeviceRows out_device = device_floats(c.n_new, width);
    attention->prefill(stream(), *store, 0, q_device.tensor, n_q_heads, softmax_scale(c.dim),
                       out_device.tensor);
    const std::vector<float> out = read_back(out_device.tensor);
    for (std::int64_t i = 0; i < c.n_new; ++i) {
      const auto row = std::size_t(i * width);
      expect_heads_match_reference(*store, 0, c.gqa, std::span(q).subspan(row, std::size_t(width)),
                                   std::span(out).subspan(row, std::size_t(width)),
                                   c.committed + c.earlier + i + 1,
                                   "new token " + std::to_string(i));
    }
  }
}

// The attention mass of the last 9 tokens: per query head, their causal softmax weights over
// every token, summed.
TEST_P(AttentionConformance, AttentionMassMatchesReference) {
  const std::shared_ptr<AttentionExecutor> attention = backend().make_attention();
  std::mt19937 rng(26);
  const int kv_heads = 2, gqa = 3, dim = 64, n_q_heads = kv_heads * gqa;
  const std::int64_t n = 300, n_query = 9, width = std::int64_t(n_q_heads) * dim;
  const std::shared_ptr<KvStore> store = mixed_store({2, kv_heads, dim}, {}, 0, kMixed, n, rng);
  const std::vector<float> q = testing::random_floats(std::size_t(n_query * width), rng);
  const DeviceRows q_device = to_device(q, n_query, width);
  const DeviceRows mass_device = device_floats(n_q_heads, n);
  attention->attention_mass(stream(), *store, 1, q_device.tensor, n_q_heads, softmax_scale(dim),
                            mass_device.tensor);
  const std::vector<float> mass = read_back(mass_device.tensor);
  for (int h = 0; h < n_q_heads; ++h) {
    const KvHeadSnapshot ordered = in_token_order(store->snapshot(1, h / gqa), dim);
    std::vector<double> want(std::size_t(n), 0.0);
    for (std::int64_t i = 0; i < n_query; ++i) {
      const auto at = std::size_t(i * width + h * dim);
      const std::vector<double> w =
          softmax_weights(ordered, std::span(q).subspan(at, std::size_t(dim)), softmax_scale(dim),
                          n - n_query + i + 1);
      for (std::size_t t = 0; t < w.size(); ++t) want[t] += w[t];
    }
    Failures off;
    double total = 0.0;
    for (std::size_t t = 0; t < want.size(); ++t) {
      const float got = mass[std::size_t(h) * std::size_t(n) + t];
      total += got;
      off.add(std::abs(got - want[t]) <= 1e-5 * std::max(1.0, want[t]), [&] {
        return "token " + std::to_string(t) + ": " + std::to_string(got) + ", want " +
               std::to_string(want[t]);
      });
    }
    EXPECT_EQ(off.count, 0) << "query head " << h << ", " << off.first;
    EXPECT_NEAR(total, double(n_query), 1e-4)
        << "query head " << h;  // each query's weights sum to 1
  }
}

}  // namespace
}  // namespace cocktail::conformance
