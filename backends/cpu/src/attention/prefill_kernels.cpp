// Blocked causal prefill attention over the FP16 tail (prefill_kernels.hpp). Per key tile:
//   S = Q · Kᵀ: keys widened and transposed to [head_dim][tile], so each step broadcasts one
//       query element per row against a row of Kᵀ, with no horizontal sums;
//   an online-softmax update per row, with the causal mask on tiles that cross the diagonal;
//   O = O · factor + P · V: values widened to [tile][head_dim], each step broadcasts one
//       probability per row.
// Rows and vectors are blocked so each step keeps up to 16 accumulators in registers.

#include "attention/prefill_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "cocktail/error.hpp"

// Highway compiles this file once per SIMD target: the order of these lines matters.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "attention/prefill_kernels.cpp"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace cocktail::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::CappedTag<float, 16>;
using VF = hn::Vec<DF>;
constexpr int kLanes = int(hn::MaxLanes(DF()));
constexpr int kTile = kPrefillKeyTile;
constexpr int kTileVecs = kTile / kLanes;
// Rows per step of the score product: rows × kTileVecs accumulators.
constexpr int kScoreRows = std::max(1, 16 / kTileVecs);
// The value product takes the head in chunks of up to 4 vectors, 4 rows at a time.
constexpr int kValueVecs = 4;
constexpr int kValueRows = 4;
constexpr float kMasked = -3.0e38f;

const float* query_row(const PrefillBlock& b, int r) {
  return b.q + std::int64_t(r / b.group) * b.q_token_stride +
         std::int64_t(r % b.group) * b.head_dim;
}

// Keys and values [j0, j0 + kt) of the tail as floats: keys transposed (zero beyond kt),
// values row by row.
void widen_tile(const PrefillBlock& b, std::int64_t j0, int kt, const PrefillScratch& s) {
  const DF df;
  const hn::Rebind<hwy::float16_t, DF> dh;
  const int D = b.head_dim;
  HWY_ALIGN float row[kLanes];
  for (int j = 0; j < kt; ++j) {
    const auto* k = reinterpret_cast<const hwy::float16_t*>(b.keys + (j0 + j) * D);
    const auto* v = reinterpret_cast<const hwy::float16_t*>(b.values + (j0 + j) * D);
    for (int d = 0; d < D; d += kLanes) {
      hn::Store(hn::PromoteTo(df, hn::LoadU(dh, v + d)), df, s.values() + j * D + d);
      hn::Store(hn::PromoteTo(df, hn::LoadU(dh, k + d)), df, row);
      for (int i = 0; i < kLanes; ++i) s.keys()[(d + i) * kTile + j] = row[i];
    }
  }
  if (kt < kTile) {
    for (int d = 0; d < D; ++d) std::fill_n(s.keys() + d * kTile + kt, kTile - kt, 0.0f);
  }
}

// scores[r][0, kTile) = q_r · k_j for rows [r0, r0 + R).
template <int R>
HWY_INLINE void score_rows(const PrefillBlock& b, int r0, const PrefillScratch& s) {
  const DF df;
  const float* q[R];
  for (int i = 0; i < R; ++i) q[i] = query_row(b, r0 + i);
  VF acc[R][kTileVecs];
  for (auto& row : acc)
    for (VF& a : row) a = hn::Zero(df);
  const float* kt = s.keys();
  for (int d = 0; d < b.head_dim; ++d) {
    VF k[kTileVecs];
    for (int v = 0; v < kTileVecs; ++v) k[v] = hn::Load(df, kt + d * kTile + v * kLanes);
    for (int i = 0; i < R; ++i) {
      const VF qv = hn::Set(df, q[i][d]);
      for (int v = 0; v < kTileVecs; ++v) acc[i][v] = hn::MulAdd(qv, k[v], acc[i][v]);
    }
  }
  for (int i = 0; i < R; ++i) {
    for (int v = 0; v < kTileVecs; ++v) {
      hn::Store(acc[i][v], df, s.scores() + (r0 + i) * kTile + v * kLanes);
    }
  }
}

// Scores become probabilities; m, l and the output rescale factor are updated. Row r sees the
// keys of the tile before `b.first_visible + r / group - j0`.
void softmax_rows(const PrefillBlock& b, int first_row, int rows, std::int64_t j0, int kt,
                  const PrefillScratch& s) {
  const DF df;
  for (int r = first_row; r < rows; ++r) {
    const auto seen = std::min<std::int64_t>(kt, b.first_visible + r / b.group - j0);
    const int visible = int(seen);
    float* row = s.scores() + r * kTile;
    std::fill(row + visible, row + kTile, kMasked);
    VF vmax = hn::Load(df, row);
    for (int v = 1; v < kTileVecs; ++v) vmax = hn::Max(vmax, hn::Load(df, row + v * kLanes));
    const float m_new = std::max(b.m[r], hn::GetLane(hn::MaxOfLanes(df, vmax)));
    const VF shift = hn::Set(df, m_new);
    VF sum = hn::Zero(df);
    for (int v = 0; v < kTileVecs; ++v) {
      const VF p = hn::Exp(df, hn::Sub(hn::Load(df, row + v * kLanes), shift));
      hn::Store(p, df, row + v * kLanes);
    }
    // Masked keys must weigh exactly nothing, whatever Exp returns for the mask value.
    std::fill(row + visible, row + kTile, 0.0f);
    for (int v = 0; v < kTileVecs; ++v) sum = hn::Add(sum, hn::Load(df, row + v * kLanes));
    const float factor = std::exp(b.m[r] - m_new);  // 0 on the first tile (m = -inf)
    b.l[r] = b.l[r] * factor + hn::GetLane(hn::SumOfLanes(df, sum));
    b.m[r] = m_new;
    s.factors()[r] = factor;
  }
}

// out[r][d0, d0 + NV·lanes) = out · factor + Σ_j p[r][j] v[j] for rows [r0, r0 + R).
template <int R, int NV>
HWY_INLINE void value_rows(float* o, int r0, int d0, int D, int kt, const PrefillScratch& s) {
  const DF df;
  VF acc[R][NV];
  for (int i = 0; i < R; ++i) {
    const VF factor = hn::Set(df, s.factors()[r0 + i]);
    for (int v = 0; v < NV; ++v) {
      acc[i][v] = hn::Mul(hn::LoadU(df, o + (r0 + i) * D + d0 + v * kLanes), factor);
    }
  }
  for (int j = 0; j < kt; ++j) {
    VF val[NV];
    for (int v = 0; v < NV; ++v) val[v] = hn::Load(df, s.values() + j * D + d0 + v * kLanes);
    for (int i = 0; i < R; ++i) {
      const VF p = hn::Set(df, s.scores()[(r0 + i) * kTile + j]);
      for (int v = 0; v < NV; ++v) acc[i][v] = hn::MulAdd(p, val[v], acc[i][v]);
    }
  }
  for (int i = 0; i < R; ++i) {
    for (int v = 0; v < NV; ++v) {
      hn::StoreU(acc[i][v], df, o + (r0 + i) * D + d0 + v * kLanes);
    }
  }
}

// Calls value_rows<R, NV> over the head in chunks of kValueVecs vectors.
template <int R>
HWY_INLINE void value_chunks(float* o, int r0, int D, int kt, const PrefillScratch& s) {
  const int vecs = D / kLanes;
  int v = 0;
  for (; v + kValueVecs <= vecs; v += kValueVecs) {
    value_rows<R, kValueVecs>(o, r0, v * kLanes, D, kt, s);
  }
  switch (vecs - v) {
    case 3:
      return value_rows<R, 3>(o, r0, v * kLanes, D, kt, s);
    case 2:
      return value_rows<R, 2>(o, r0, v * kLanes, D, kt, s);
    case 1:
      return value_rows<R, 1>(o, r0, v * kLanes, D, kt, s);
    default:
      return;
  }
}

void PrefillTailBlock(const PrefillBlock& b, const PrefillScratch& s) {
  const int D = b.head_dim;
  const int rows = b.tokens * b.group;
  const std::int64_t keys_seen = b.first_visible + b.tokens - 1;  // by the block's last query
  for (std::int64_t j0 = 0; j0 < keys_seen; j0 += kTile) {
    const int kt = int(std::min<std::int64_t>(kTile, keys_seen - j0));
    // Queries before this one see none of the tile's keys.
    const auto first_token = std::clamp<std::int64_t>(j0 - b.first_visible + 1, 0, b.tokens);
    const int first_row = int(first_token) * b.group;
    widen_tile(b, j0, kt, s);
    int r = first_row;
    for (; r + kScoreRows <= rows; r += kScoreRows) score_rows<kScoreRows>(b, r, s);
    for (; r < rows; ++r) score_rows<1>(b, r, s);
    softmax_rows(b, first_row, rows, j0, kt, s);
    r = first_row;
    for (; r + kValueRows <= rows; r += kValueRows) value_chunks<kValueRows>(b.o, r, D, kt, s);
    for (; r < rows; ++r) value_chunks<1>(b.o, r, D, kt, s);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cocktail::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cocktail::cpu {

HWY_EXPORT(PrefillTailBlock);

namespace {

hwy::AlignedFreeUniquePtr<float[]> allocate(std::size_t count) {
  auto buffer = hwy::AllocateAligned<float>(count);
  if (!buffer) {
    throw Error("prefill attention: cannot allocate " + std::to_string(count * sizeof(float)) +
                " bytes of scratch");
  }
  return buffer;
}

}  // namespace

PrefillScratch::PrefillScratch(int head_dim, int max_rows) {
  if (head_dim % kPrefillDimQuantum != 0) {
    throw Error("prefill attention: head_dim " + std::to_string(head_dim) +
                " is not a multiple of " + std::to_string(kPrefillDimQuantum));
  }
  keys_ = allocate(std::size_t(head_dim) * kPrefillKeyTile);
  values_ = allocate(std::size_t(kPrefillKeyTile) * std::size_t(head_dim));
  scores_ = allocate(std::size_t(max_rows) * kPrefillKeyTile);
  factors_ = allocate(std::size_t(max_rows));
}

void prefill_tail_block(const PrefillBlock& block, const PrefillScratch& scratch) {
  HWY_DYNAMIC_DISPATCH(PrefillTailBlock)(block, scratch);
}

}  // namespace cocktail::cpu
#endif
