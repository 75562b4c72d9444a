// KvStore conformance: appends, commits that reorder and quantize, re-plans that lower
// precisions, snapshots, segments and bytes, each checked against what was appended or held
// before, with the bounds quant_spec.hpp allows (float64, reference.hpp).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cocktail/error.hpp"
#include "cocktail/quant_spec.hpp"
#include "conformance.hpp"
#include "reference.hpp"

namespace cocktail::conformance {
namespace {

constexpr KvShape kShape{2, 2, 64};
constexpr int kChunkLengths[] = {32, 40, 32, 64};  // a 40-token chunk ends inside a tile

// Over 205 tokens: every precision once, scattered, and a 5-token FP16 remainder.
Plan first_plan() {
  constexpr Precision kOrder[] = {Precision::int4, Precision::fp16, Precision::int2,
                                  Precision::int8, Precision::nf4};
  return scattered_plan(205, kChunkLengths, kOrder);
}

// The re-plan of first_plan(): FP16 and INT8 chunks lowered, the others kept (the remainder
// too, which must now leave the tail), and a new INT8 chunk; 3 tokens stay in the tail.
Plan second_plan() {
  Plan plan = first_plan();
  plan.chunks[1].precision = Precision::int4;  // from FP16
  plan.chunks[3].precision = Precision::int2;  // from INT8
  plan.chunks.push_back({6, 205, 32, 0.0, Precision::int8});
  return plan;
}

KvStoreOptions options() {
  return {kShape, KvQuantLayout{}, 0};
}

class KvStoreConformance : public BackendTest {
 protected:
  // A store holding `n_tokens` random tokens (appended in two calls, so the tail grows), and
  // each layer's rows.
  struct Filled {
    std::shared_ptr<KvStore> store;
    std::vector<KvRows> appended;
  };
  Filled filled_store(std::int64_t n_tokens, unsigned seed) const {
    std::mt19937 rng(seed);
    Filled filled{backend().make_kv_store(options()), {}};
    filled.appended = append_random(*filled.store, n_tokens * 3 / 4, rng);
    const std::vector<KvRows> more = append_random(*filled.store, n_tokens - n_tokens * 3 / 4, rng);
    for (std::size_t layer = 0; layer < more.size(); ++layer) {
      KvRows& rows = filled.appended[layer];
      rows.k.insert(rows.k.end(), more[layer].k.begin(), more[layer].k.end());
      rows.v.insert(rows.v.end(), more[layer].v.begin(), more[layer].v.end());
    }
    return filled;
  }
};
COCKTAIL_CONFORMANCE_SUITE(KvStoreConformance);

// Positions in storage order: the committed chunks in Plan::storage_order(), then the tail. A
// last FP16 chunk may stay in the tail (KvStore::n_committed()), after the segments.
std::vector<std::int64_t> storage_positions(const KvStore& store) {
  const Plan& plan = store.plan();
  const std::int64_t committed = store.n_committed();
  const bool remainder_in_tail = committed < plan.n_tokens();
  EXPECT_TRUE(!remainder_in_tail || (plan.chunks.back().precision == Precision::fp16 &&
                                     committed == plan.chunks.back().first_token))
      << "n_committed " << committed << " is neither the plan's " << plan.n_tokens()
      << " tokens nor the start of a last FP16 chunk";
  std::vector<std::int64_t> positions;
  for (const int i : plan.storage_order()) {
    const ChunkPlan& c = plan.chunks[std::size_t(i)];
    if (c.first_token >= committed) continue;
    for (std::int64_t t = c.first_token; t < c.first_token + c.n_tokens; ++t) {
      positions.push_back(t);
    }
  }
  for (std::int64_t t = committed; t < store.n_tokens(); ++t) positions.push_back(t);
  return positions;
}

// The range of the source values that may share a group with element (row, channel) of a
// snapshot: along the group's axis, the group_size - 1 neighbours on each side at the same
// precision (for per-channel groups, rows in storage order; for per-token groups, the row's
// channels). This holds every group that contains the element, wherever a backend's groups
// start along the tokens.
std::pair<double, double> neighbourhood_range(const KvHeadSnapshot& snapshot,
                                              const std::vector<float>& source_rows,
                                              const std::vector<Precision>& row_precisions,
                                              std::size_t row, int channel, QuantAxis axis,
                                              int group_size) {
  const auto dim = std::size_t(kShape.head_dim);
  const auto reach = std::size_t(group_size - 1);
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  auto take = [&](std::size_t r, std::size_t c) {
    const double x = source_rows[std::size_t(snapshot.positions[r]) * dim + c];
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  };
  if (axis == QuantAxis::per_channel) {
    const std::size_t last = std::min(row + reach, row_precisions.size() - 1);
    for (std::size_t r = row > reach ? row - reach : 0; r <= last; ++r) {
      if (row_precisions[r] == row_precisions[row]) take(r, std::size_t(channel));
    }
  } else {
    const std::size_t c0 = std::size_t(channel) > reach ? std::size_t(channel) - reach : 0;
    for (std::size_t c = c0; c <= std::min(std::size_t(channel) + reach, dim - 1); ++c) {
      take(row, c);
    }
  }
  return {lo, hi};
}

// Checks (layer, head) of a store that has committed its plan: rows in storage order, and every
// key and value what its precision may decode the source row of its position to. `source` is
// the token-ordered snapshot from before the commit: a commit quantizes what the store held.
void expect_snapshot_follows_plan(const KvStore& store, int layer, int head,
                                  const KvHeadSnapshot& source) {
  SCOPED_TRACE("layer " + std::to_string(layer) + " head " + std::to_string(head));
  const KvHeadSnapshot snapshot = store.snapshot(layer, head);
  ASSERT_EQ(snapshot.positions, storage_positions(store));
  const auto dim = std::size_t(kShape.head_dim);
  ASSERT_EQ(snapshot.keys.size(), snapshot.positions.size() * dim);
  ASSERT_EQ(snapshot.values.size(), snapshot.positions.size() * dim);
  const std::vector<Precision> by_position = precision_by_position(store.plan(), store.n_tokens());
  std::vector<Precision> by_row;
  for (const std::int64_t t : snapshot.positions) by_row.push_back(by_position[std::size_t(t)]);

  const KvQuantLayout& layout = store.options().layout;
  const struct {
    const char* name;
    const std::vector<float>& source;
    const std::vector<float>& got;
    QuantAxis axis;
  } parts[] = {{"key", source.keys, snapshot.keys, layout.key_axis},
               {"value", source.values, snapshot.values, layout.value_axis}};
  for (const auto& part : parts) {
    Failures outside;
    for (std::size_t row = 0; row < snapshot.positions.size(); ++row) {
      for (int c = 0; c < kShape.head_dim; ++c) {
        const auto [lo, hi] = neighbourhood_range(snapshot, part.source, by_row, row, c, part.axis,
                                                  layout.group_size);
        const double x = part.source[std::size_t(snapshot.positions[row]) * dim + std::size_t(c)];
        const double got = part.got[row * dim + std::size_t(c)];
        const Allowed allowed = allowed_decoding(by_row[row], x, lo, hi);
        outside.add(allowed.admits(got), [&] {
          return std::string(part.name) + " of token " + std::to_string(snapshot.positions[row]) +
                 " (" + std::string(to_string(by_row[row])) + ") channel " + std::to_string(c) +
                 ": " + std::to_string(x) + " decoded to " + std::to_string(got) + ", allowed " +
                 std::to_string(allowed.center) + " ± " + std::to_string(allowed.radius);
        });
      }
    }
    EXPECT_EQ(outside.count, 0) << outside.first;
  }
}

// Segments in storage order (precisions from best to worst, the FP16 tail last) that hold each
// precision's planned tokens, and whose bytes make up bytes().
void expect_segments_follow_plan(const KvStore& store) {
  const Plan& plan = store.plan();
  const std::vector<SegmentInfo> segments = store.segments();
  std::int64_t tokens = 0;
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const SegmentInfo& s = segments[i];
    EXPECT_GT(s.n_tokens, 0) << "segment " << i;
    EXPECT_GT(s.bytes, 0u) << "segment " << i;
    const bool tail = i + 1 == segments.size() && s.precision == Precision::fp16;
    if (i > 0 && !tail) {
      EXPECT_LT(segments[i - 1].precision, s.precision) << "segment " << i;
    }
    tokens += s.n_tokens;
    bytes += s.bytes;
  }
  EXPECT_EQ(tokens, store.n_tokens());
  EXPECT_EQ(bytes, store.bytes());
  for (const Precision p : kAllPrecisions) {
    std::int64_t at_p = 0;
    for (const SegmentInfo& s : segments) at_p += s.precision == p ? s.n_tokens : 0;
    const std::int64_t unplanned = p == Precision::fp16 ? store.n_tokens() - plan.n_tokens() : 0;
    EXPECT_EQ(at_p, plan.tokens_at(p) + unplanned) << to_string(p);
  }
}

// The fewest bytes a store can hold its tokens in: each planned token at its precision's stored
// bits (codes and group metadata, quant_spec.hpp), each one past the plan at FP16, for K and V
// of every layer and KV head.
double least_bytes(const KvStore& store) {
  const KvShape& s = store.options().shape;
  const int group = store.options().layout.group_size;
  double bits = 16.0 * double(store.n_tokens() - store.plan().n_tokens());
  for (const ChunkPlan& c : store.plan().chunks)
    bits += c.n_tokens * stored_bits(c.precision, group);
  return bits / 8 * 2 * double(s.token_floats()) * s.n_layers;
}

// Before any commit every token waits in the FP16 tail, in order, as its FP16 rounding.
void expect_tail_holds_fp16_of(const KvStore& store, const std::vector<KvRows>& appended) {
  const auto dim = std::size_t(kShape.head_dim);
  for (int layer = 0; layer < kShape.n_layers; ++layer) {
    const KvRows& rows = appended[std::size_t(layer)];
    for (int head = 0; head < kShape.n_kv_heads; ++head) {
      const KvHeadSnapshot tail = store.snapshot(layer, head);
      ASSERT_EQ(tail.positions.size(), std::size_t(store.n_tokens()));
      Failures inexact;
      for (std::size_t t = 0; t < tail.positions.size(); ++t) {
        inexact.add(tail.positions[t] == std::int64_t(t),
                    [&] { return "row " + std::to_string(t) + " is out of order"; });
        for (std::size_t c = 0; c < dim; ++c) {
          const std::size_t at = t * kShape.token_floats() + std::size_t(head) * dim + c;
          inexact.add(tail.keys[t * dim + c] == round_to_half(rows.k[at]) &&
                          tail.values[t * dim + c] == round_to_half(rows.v[at]),
                      [&] {
                        return "token " + std::to_string(t) + " channel " + std::to_string(c) +
                               " is not its FP16 rounding";
                      });
        }
      }
      EXPECT_EQ(inexact.count, 0) << "layer " << layer << " head " << head << ": " << inexact.first;
    }
  }
}

// NF4, INT4 and INT2 tokens are never requantized: a chunk that keeps one of them through a
// re-plan keeps its values exactly. Both snapshots in token order.
void expect_low_precisions_kept(const KvHeadSnapshot& before, const KvHeadSnapshot& after,
                                const Plan& old_plan, const Plan& new_plan) {
  const auto dim = std::size_t(kShape.head_dim);
  const auto n = std::int64_t(before.positions.size());
  const std::vector<Precision> was = precision_by_position(old_plan, n);
  const std::vector<Precision> is = precision_by_position(new_plan, n);
  Failures changed;
  for (std::size_t t = 0; t < was.size(); ++t) {
    if (was[t] != is[t] || code_bits(is[t]) > 4) continue;
    auto row = [&](const std::vector<float>& rows) {
      return std::span(rows).subspan(t * dim, dim);
    };
    changed.add(std::ranges::equal(row(after.keys), row(before.keys)) &&
                    std::ranges::equal(row(after.values), row(before.values)),
                [&] {
                  return "token " + std::to_string(t) + " kept " + std::string(to_string(is[t])) +
                         " but changed";
                });
  }
  EXPECT_EQ(changed.count, 0) << changed.first;
}

std::vector<KvHeadSnapshot> token_ordered_snapshots(const KvStore& store) {
  std::vector<KvHeadSnapshot> out;
  for (int layer = 0; layer < kShape.n_layers; ++layer) {
    for (int head = 0; head < kShape.n_kv_heads; ++head) {
      out.push_back(in_token_order(store.snapshot(layer, head), kShape.head_dim));
    }
  }
  return out;
}

// Appended tokens wait in the FP16 tail in order; a commit reorders the planned ones into
// precision segments and quantizes them within bounds; a re-plan lowers precisions from FP16
// and INT8, keeps lower ones exactly, and commits more tokens.
TEST_P(KvStoreConformance, CommitsReorderAndQuantizeWithinBounds) {
  const auto [store, appended] = filled_store(240, 3);
  ASSERT_EQ(store->n_tokens(), 240);
  EXPECT_EQ(store->n_committed(), 0);
  EXPECT_GE(double(store->bytes()), double(kShape.fp16_bytes(240)));
  expect_tail_holds_fp16_of(*store, appended);
  const std::size_t tail_bytes = store->bytes();

  const std::vector<KvHeadSnapshot> appended_snapshots = token_ordered_snapshots(*store);
  commit(*store, first_plan());
  EXPECT_EQ(store->plan().chunks, first_plan().chunks);
  EXPECT_EQ(store->n_tokens(), 240);
  for (int layer = 0; layer < kShape.n_layers; ++layer) {
    for (int head = 0; head < kShape.n_kv_heads; ++head) {
      expect_snapshot_follows_plan(
          *store, layer, head, appended_snapshots[std::size_t(layer * kShape.n_kv_heads + head)]);
    }
  }
  expect_segments_follow_plan(*store);
  const std::size_t first_bytes = store->bytes();
  EXPECT_LT(first_bytes, tail_bytes);
  EXPECT_GE(double(first_bytes), least_bytes(*store));

  const std::vector<KvHeadSnapshot> first_snapshots = token_ordered_snapshots(*store);
  commit(*store, second_plan());
  EXPECT_EQ(store->plan().chunks, second_plan().chunks);
  EXPECT_EQ(store->n_committed(), 237);
  for (int layer = 0; layer < kShape.n_layers; ++layer) {
    for (int head = 0; head < kShape.n_kv_heads; ++head) {
      const KvHeadSnapshot& source = first_snapshots[std::size_t(layer * kShape.n_kv_heads + head)];
      expect_snapshot_follows_plan(*store, layer, head, source);
      expect_low_precisions_kept(source,
                                 in_token_order(store->snapshot(layer, head), kShape.head_dim),
                                 first_plan(), second_plan());
    }
  }
  expect_segments_follow_plan(*store);
  EXPECT_LT(store->bytes(), first_bytes);
  EXPECT_GE(double(store->bytes()), least_bytes(*store));
}

// A commit that raises a precision, requantizes an INT4 chunk or plans tokens that are not
// stored is an Error, and leaves the store as it was.
TEST_P(KvStoreConformance, RefusesCommitsThatRaiseOrRequantizeLowPrecisions) {
  const std::shared_ptr<KvStore> store = filled_store(240, 5).store;
  commit(*store, second_plan());
  const KvHeadSnapshot kept = store->snapshot(1, 1);
  Plan raise = second_plan();
  raise.chunks[0].precision = Precision::int8;  // INT4 up to INT8
  Plan from_int4 = second_plan();
  from_int4.chunks[0].precision = Precision::int2;
  Plan too_long = second_plan();
  too_long.chunks.push_back({7, 237, 32, 0.0, Precision::int4});  // 3 tokens are stored
  for (const Plan* plan : {&raise, &from_int4, &too_long}) {
    EXPECT_THROW(commit(*store, *plan), Error);
    EXPECT_EQ(store->plan().chunks, second_plan().chunks);
    const KvHeadSnapshot now = store->snapshot(1, 1);
    EXPECT_EQ(now.positions, kept.positions);
    EXPECT_EQ(now.keys, kept.keys);
    EXPECT_EQ(now.values, kept.values);
  }
}

// bytes() is the store's real footprint: lower precisions of the same chunks take fewer bytes,
// and none takes fewer than its codes and metadata.
TEST_P(KvStoreConformance, BytesShrinkWithPrecision) {
  auto with_every_chunk_at = [](Precision p) {
    Plan plan = second_plan();
    for (ChunkPlan& c : plan.chunks) c.precision = p;
    return plan;
  };
  std::vector<std::size_t> bytes;
  for (const Plan& plan :
       {with_every_chunk_at(Precision::fp16), second_plan(), with_every_chunk_at(Precision::int4),
        with_every_chunk_at(Precision::int2)}) {
    const std::shared_ptr<KvStore> store = filled_store(240, 7).store;
    commit(*store, plan);
    expect_segments_follow_plan(*store);
    EXPECT_GE(double(store->bytes()), least_bytes(*store));
    bytes.push_back(store->bytes());
  }
  for (std::size_t i = 1; i < bytes.size(); ++i) EXPECT_LT(bytes[i], bytes[i - 1]) << "plan " << i;
}

// A clone holds the same tokens, plan and values, and goes on alone.
TEST_P(KvStoreConformance, CloneIsIndependent) {
  const std::shared_ptr<KvStore> store = filled_store(240, 9).store;
  commit(*store, first_plan());
  const std::shared_ptr<KvStore> copy = store->clone(store->options().layout);
  EXPECT_EQ(copy->plan().chunks, store->plan().chunks);
  EXPECT_EQ(copy->n_committed(), store->n_committed());
  EXPECT_EQ(copy->bytes(), store->bytes());
  const KvHeadSnapshot original = store->snapshot(1, 0);
  const KvHeadSnapshot copied = copy->snapshot(1, 0);
  EXPECT_EQ(copied.positions, original.positions);
  EXPECT_EQ(copied.keys, original.keys);
  EXPECT_EQ(copied.values, original.values);
  std::mt19937 rng(10);
  append_random(*copy, 3, rng);
  commit(*copy, second_plan());
  EXPECT_EQ(copy->n_tokens(), 243);
  EXPECT_EQ(store->n_tokens(), 240);
  EXPECT_EQ(store->plan().chunks, first_plan().chunks);
  EXPECT_EQ(store->snapshot(1, 0).keys, original.keys);
}

}  // namespace
}  // namespace cocktail::conformance
