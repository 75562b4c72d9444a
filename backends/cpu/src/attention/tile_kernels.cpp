// Decode-attention tile kernels. Quantized codes are read packed and dequantized in registers
// in the same pass that does the dot products; the quantization constants are folded out of the
// inner loops (DESIGN.md, "Where the speed comes from"):
//   keys per channel:  q·k = Σ_c (q_c s_c) k̂_c + Σ_c q_c z_c   (scaled query once per tile)
//   values per token:  Σ_t p_t v_t = Σ_t (p_t s_t) v̂_t + Σ_t p_t z_t
// Every query head of a KV head (GQA) is served from the same decoded codes.
// INT4 / INT2 tiles in those two layouts are lane-packed (packed_layout.hpp) and dotted in place,
// as 16-bit integers against 16-bit row weights (int_lane_dot) on targets where that beats
// converting every code to a float (float_lane_dot). Other tiles (FP16, INT8, NF4, other axes)
// are planar.

#include "attention/tile_kernels.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "quant/quantizer.hpp"

// Highway compiles this file once per SIMD target: the order of these lines matters.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "attention/tile_kernels.cpp"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
#include <hwy/cache_control.h>
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace cocktail::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// At most 16 lanes, so a 32-code block is a whole number of vectors on fixed-width targets.
using DF = hn::CappedTag<float, 16>;
using VF = hn::Vec<DF>;
constexpr std::size_t kLanes = hn::MaxLanes(DF());
// Kernels walk tiles in blocks of 32 codes along the vectorised axis (tokens for keys,
// channels for values): one 16-byte unit of INT4 codes, half a unit of INT2.
constexpr int kBlock = 32;
constexpr int kVecs = int(kBlock / kLanes);
constexpr float kMasked = -3.0e38f;
// 1.5·2^23: a float x with |x| < 2^22 plus this is rounded to the integer k nearest x (ties to
// even) and holds 0x4B400000 + k in its bits, k in the low mantissa bits.
constexpr float kRoundToInt = 12582912.0f;

// Where INT4 / INT2 lane dots multiply 16-bit codes by 16-bit row weights (int_lane_dot:
// ReorderWidenMulAccumulate, i.e. vpmaddwd, smlal) instead of converting each code to a float.
// The float path needs an AND, a conversion and an FMA a code, and with 8 lanes or fewer that
// work, not memory, bounds a tile; AVX-512's 16 float lanes reach the byte ratio as they are.
// Not on the scalar target, whose one lane cannot hold a pair of 16-bit codes.
constexpr bool kIntegerLaneDots =
    HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_AVX3 && HWY_TARGET != HWY_AVX3_DL;

// FP16 values are kept as their bit patterns (uint16_t) and widened in registers.
const std::uint16_t* as_halves(const std::uint8_t* p) {
  return reinterpret_cast<const std::uint16_t*>(p);
}

VF load_halves(const std::uint16_t* p) {
  const hn::Rebind<hwy::float16_t, DF> dh;
  return hn::PromoteTo(DF(), hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p)));
}

// Codes one 16-byte planar unit holds (for FP16 and INT8, a run of 16 codes).
template <Precision P>
constexpr int kUnitCodes = code_bits(P) >= 8 ? 16 : 16 * (8 / code_bits(P));

// Decodes the S codes at flat index `flat` of a packed code array into S / kLanes vectors of
// floats: the code values, before scale and zero. `flat` is a multiple of S. When the span
// covers whole units every plane is a compile-time constant and each unit is loaded once; the
// codes are then masked where they sit in the byte, worth code · 2^(bits · plane), which saves
// a shift per vector: callers undo the power of two once per tile with span_unscale (exact).
// A span shorter than a unit (32 INT2 codes) reads its plane from a run-time offset and
// shifts it down.
template <Precision P, int S>
HWY_INLINE void decode_span(const std::uint8_t* codes, std::size_t flat, VF (&out)[S / kLanes]) {
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::RebindToUnsigned<DF> du;
  const hn::Rebind<std::uint8_t, DF> d8;
  constexpr int n = int(S / kLanes);
  if constexpr (P == Precision::fp16) {
    for (int i = 0; i < n; ++i) out[i] = load_halves(as_halves(codes) + flat + i * kLanes);
  } else if constexpr (P == Precision::int8) {
    for (int i = 0; i < n; ++i) {
      out[i] = hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(d8, codes + flat + i * kLanes)));
    }
  } else {
    constexpr int bits = code_bits(P);
    constexpr int unit = kUnitCodes<P>;
    constexpr bool in_place = S >= unit && P != Precision::nf4;
    const std::uint8_t* first_unit = codes + flat / unit * 16;
    const int first_plane = S >= unit ? 0 : int(flat % unit) / 16;
#pragma GCC unroll 16
    for (int i = 0; i < n; ++i) {
      const int offset = i * int(kLanes);  // code offset within the span
      const std::uint8_t* bytes = first_unit + offset / unit * 16 + offset % 16;
      const int plane = first_plane + offset % unit / 16;
      const auto packed = hn::PromoteTo(du, hn::LoadU(d8, bytes));
      if constexpr (in_place) {
        const auto code = hn::And(packed, hn::Set(du, ((1u << bits) - 1) << (plane * bits)));
        out[i] = hn::ConvertTo(df, hn::BitCast(di, code));
      } else {
        const auto code =
            hn::And(hn::ShiftRightSame(packed, plane * bits), hn::Set(du, (1u << bits) - 1));
        if constexpr (P == Precision::nf4) {
          out[i] = hn::GatherIndex(df, kNf4Table.data(), hn::BitCast(di, code));
        } else {
          out[i] = hn::ConvertTo(df, hn::BitCast(di, code));
        }
      }
    }
  }
}

// What vector `i` of a decode_span<P, S> must be multiplied by to give the code values.
template <Precision P, int S>
constexpr float span_unscale(int i) {
  constexpr int bits = code_bits(P);
  if constexpr (bits >= 8 || P == Precision::nf4 || S < kUnitCodes<P>) {
    return 1.0f;
  } else {
    const int plane = i * int(kLanes) % kUnitCodes<P> / 16;
    return 1.0f / float(1u << (bits * plane));
  }
}

// The bytes a task reads last (its FP16 tiles and tail), asked for a few cache lines at a time
// while its quantized tiles are computed: those are bound by arithmetic, the FP16 ones by
// memory, so in a decode step, where neither is in the cache, their costs overlap. Only the
// first kLatePrefetchBytes: lines asked for much earlier than that would leave the L2 before
// they are read (the hardware prefetcher streams the rest once the walk reaches them).
constexpr std::size_t kLatePrefetchBytes = 128 * 1024;

class LatePrefetch {
 public:
  void add(const void* data, std::size_t bytes) {
    bytes = std::min(bytes, kLatePrefetchBytes - total_);
    if (bytes > 0 && n_ < int(ranges_.size())) {
      ranges_[std::size_t(n_++)] = {static_cast<const std::uint8_t*>(data), bytes};
      total_ += bytes;
    }
  }
  // Spreads the lines over the first half of `tiles` steps.
  void pace_over(std::int64_t tiles) {
    std::int64_t lines = 0;
    for (int i = 0; i < n_; ++i)
      lines += std::int64_t(round_up(ranges_[std::size_t(i)].bytes, kCacheLine) / kCacheLine);
    const std::int64_t steps = std::max<std::int64_t>(tiles / 2, 1);
    per_step_ = tiles > 0 ? int((lines + steps - 1) / steps) : 0;
  }
  void stop() { per_step_ = 0; }
  void step() {
    for (int k = 0; k < per_step_ && at_ < n_; ++k) {
      const Range& r = ranges_[std::size_t(at_)];
      hwy::Prefetch(r.data + offset_);
      offset_ += kCacheLine;
      if (offset_ >= r.bytes) {
        ++at_;
        offset_ = 0;
      }
    }
  }

 private:
  struct Range {
    const std::uint8_t* data;
    std::size_t bytes;
  };
  std::array<Range, 3> ranges_{};  // FP16 segment tiles, tail keys, tail values
  int n_ = 0;
  std::size_t total_ = 0;
  int at_ = 0;
  std::size_t offset_ = 0;
  int per_step_ = 0;
};

// The query folded with one tile's per-channel key constants (fold_key_constants).
struct KeyFold {
  float* qm;      // [B][D] query times key scale
  float* bias;    // [B] Σ_c q_c·z_c
  float* qm_max;  // [B] max_c |qm[h][c]|
  // The integer lane dot's copy of qm (quantize_row_pairs): [B][D] words and [B] scales.
  std::int32_t* words;
  float* word_scale;
};

// Per-task scratch, sized for the largest head batch.
struct Scratch {
  LatePrefetch late;
  std::vector<float> scores;   // [B][T] scores, then probabilities
  std::vector<float> weights;  // [B][value groups][T] per-token value weights
  // Two key folds, so that lane-packed tiles fold the next tile's keys while this one runs.
  std::vector<float> qm;  // [2][B][D]
  std::size_t qm_stride = 0;
  float key_bias[2][8] = {};
  float key_qm_max[2][8] = {};
  std::vector<std::int32_t> key_words;  // [2][B][D], the folds' rows for int_lane_dot
  float key_word_scale[2][8] = {};
  std::vector<std::int32_t> value_words;  // [B][T], one value group's rows for int_lane_dot
  std::vector<float> weight_max;          // [B][value groups], for value_words
  std::vector<float> extra;               // [B][groups] query sums of per-token key groups
  // Per head and value group, Σ_t p_t·z_t lane by lane, rescaled with o and added to it once
  // per batch (run_batch) instead of reduced across lanes every tile.
  std::vector<float> zero_lanes;  // [B][value groups][kLanes]
  int value_groups = 1;
  float factor[8] = {};
  // Per head, the running sum of exp(score - m) kept lane by lane, so that a tile adds it
  // without a reduction across lanes; run_batch reduces it once.
  alignas(64) float lane_sums[8][kLanes] = {};

  KeyFold fold(int slot) {
    const std::size_t at = std::size_t(slot) * qm_stride;
    return {qm.data() + at, key_bias[slot], key_qm_max[slot], key_words.data() + at,
            key_word_scale[slot]};
  }
};

// ---- keys: scores[h][t] = q_h · k_t for the tile's tokens ----

// acc[h][i] += Σ_{c in [c_begin, c_end)} w[h][c] · k̂[c][tb + i·lanes]: the raw dot products of
// channel-major key codes. A 32-token tile takes whole units per step (two channels at a time
// for INT2); other tile sizes step one channel at a time.
template <Precision P, int B>
HWY_INLINE void key_dot(const std::uint8_t* codes, int T, int D, const float* w, int c_begin,
                        int c_end, int tb, VF (&acc)[B][kVecs]) {
  const DF df;
  if (T == kBlock) {
    constexpr int span = std::max(kUnitCodes<P>, kBlock);
    constexpr int channels = span / kBlock;
    // One accumulator set per channel of the step, so consecutive FMAs do not wait on each
    // other, unless the sets would no longer fit in registers (large head batches). Each set
    // is unscaled once at the end; a channel sharing another's set has its weight rescaled
    // to that set's planes first (by a power of two, so exactly).
    constexpr int sets = channels * B * kVecs <= 16 ? channels : 1;
    VF part[sets][B][kVecs];
    for (auto& set : part)
      for (auto& row : set)
        for (VF& a : row) a = hn::Zero(df);
    for (int c = c_begin; c < c_end; c += channels) {
      VF code[span / kLanes];
      decode_span<P, span>(codes, std::size_t(c) * kBlock, code);
      for (int j = 0; j < channels; ++j) {
        const float to_set =
            span_unscale<P, span>(j * kVecs) / span_unscale<P, span>(j % sets * kVecs);
        for (int h = 0; h < B; ++h) {
          const VF wv = hn::Set(df, w[h * D + c + j] * to_set);
          for (int i = 0; i < kVecs; ++i) {
            part[j % sets][h][i] = hn::MulAdd(wv, code[j * kVecs + i], part[j % sets][h][i]);
          }
        }
      }
    }
    for (int j = 0; j < sets; ++j) {
      for (int h = 0; h < B; ++h) {
        for (int i = 0; i < kVecs; ++i) {
          const VF unscale = hn::Set(df, span_unscale<P, span>(j * kVecs + i));
          acc[h][i] = hn::MulAdd(part[j][h][i], unscale, acc[h][i]);
        }
      }
    }
    return;
  }
  VF part[B][kVecs];
  for (auto& row : part)
    for (VF& a : row) a = hn::Zero(df);
  for (int c = c_begin; c < c_end; ++c) {
    VF code[kVecs];
    decode_span<P, kBlock>(codes, std::size_t(c) * std::size_t(T) + std::size_t(tb), code);
    for (int h = 0; h < B; ++h) {
      const VF wv = hn::Set(df, w[h * D + c]);
      for (int i = 0; i < kVecs; ++i) part[h][i] = hn::MulAdd(wv, code[i], part[h][i]);
    }
  }
  for (int h = 0; h < B; ++h) {
    for (int i = 0; i < kVecs; ++i) {
      acc[h][i] = hn::MulAdd(part[h][i], hn::Set(df, span_unscale<P, kBlock>(i)), acc[h][i]);
    }
  }
}

// Keys per channel (one group a tile): folds the per-channel scale into the query,
// qm[h][c] = q[h][c]·s_c·row_unscale[c % 16] (the last factor only for the float lane dot,
// see lane_row_unscale), and the zero into one bias a head, bias[h] = Σ_c q[h][c]·z_c.
template <Precision P, int B>
void fold_key_constants(const TileFormat& f, const std::uint8_t* tile, const float* q,
                        const KeyFold& out, const float* row_unscale = nullptr) {
  const DF df;
  const int D = f.head_dim;
  const std::uint16_t* scales = as_halves(tile + f.key.scales_offset);
  const std::uint16_t* zeros = as_halves(tile + f.key.zeros_offset);
  constexpr bool has_zero = P == Precision::int8 || P == Precision::int4 || P == Precision::int2;
  // Heads inside the channel loop: each scale and zero is widened once for the whole batch, and
  // the heads' bias and maximum chains run side by side. One head keeps two bias sums, so that
  // neighbouring FMAs do not wait on each other (the head dimension is a multiple of 32, so of
  // two vectors).
  constexpr int chains = B == 1 ? 2 : 1;
  VF bias[chains][B];
  VF vmax[B];
  for (int h = 0; h < B; ++h) {
    vmax[h] = hn::Zero(df);
    for (int k = 0; k < chains; ++k) bias[k][h] = hn::Zero(df);
  }
  for (int c0 = 0; c0 < D; c0 += chains * int(kLanes)) {
    for (int k = 0; k < chains; ++k) {
      const int c = c0 + k * int(kLanes);
      VF scale = P == Precision::fp16 ? hn::Set(df, 1.0f) : load_halves(scales + c);
      if (row_unscale) scale = hn::Mul(scale, hn::LoadU(df, row_unscale + c % kLaneColumns));
      const VF zero = has_zero ? load_halves(zeros + c) : hn::Zero(df);
      for (int h = 0; h < B; ++h) {
        const VF qc = hn::LoadU(df, q + h * D + c);
        const VF scaled = hn::Mul(qc, scale);
        hn::StoreU(scaled, df, out.qm + h * D + c);
        if constexpr (kIntegerLaneDots) vmax[h] = hn::Max(vmax[h], hn::Abs(scaled));
        if constexpr (has_zero) bias[k][h] = hn::MulAdd(qc, zero, bias[k][h]);
      }
    }
  }
  for (int h = 0; h < B; ++h) {
    VF sum = bias[0][h];
    for (int k = 1; k < chains; ++k) sum = hn::Add(sum, bias[k][h]);
    out.bias[h] = hn::GetLane(hn::SumOfLanes(df, sum));
    out.qm_max[h] = hn::GetLane(hn::MaxOfLanes(df, vmax[h]));
  }
}

// ---- lane-packed tiles (INT4 / INT2 keys per channel, values per token; packed_layout.hpp) ----

static_assert(std::endian::native == std::endian::little,
              "lane-packed codes are read as 32-bit lanes whose byte j is bits 8j..8j+7");
constexpr int kLaneVecs = kLaneColumns / int(kLanes);
constexpr std::size_t kLaneUnitBytes = 64;

// The row weights of a lane dot for each head of a batch (the scaled query along channels for
// keys, the scaled probabilities along tokens for values): for float_lane_dot as floats
// pre-scaled by lane_row_unscale, for int_lane_dot as quantize_row_pairs made them.
template <int B>
struct LaneWeights {
  const float* rows[B] = {};          // [n_rows]
  const std::int32_t* words[B] = {};  // [n_rows]
  float scale[B] = {};
};

// Adds sets[1..N) into sets[0] pairwise (width W = N / 2 first), so that the sum's latency chain
// is log2(N) adds long, not N - 1: a value dot is only 32 rows, so the chain shows.
template <int W, int N, int B>
HWY_INLINE void add_pairwise(VF (&sets)[N][B][kLaneVecs]) {
  static_assert(std::has_single_bit(unsigned(N)));
  if constexpr (W > 0) {
    for (int k = 0; k < W; ++k) {
      for (int h = 0; h < B; ++h) {
        for (int v = 0; v < kLaneVecs; ++v)
          sets[k][h][v] = hn::Add(sets[k][h][v], sets[k + W][h][v]);
      }
    }
    add_pairwise<W / 2>(sets);
  }
}

// acc[h][0..] = Σ_r w_h[r]·code[r][col] over the rows of n_units consecutive lane units, for
// their 16 columns: code (r, col) sits in its column's 32-bit lane at bit 8j + m·bits for
// r = L·u + 4m + j. Each code is masked where it sits in its lane's low or high half instead of
// shifted down, so it converts to code·2^pos with pos = 8(j mod 2) + m·bits < 16; the row weights
// come pre-multiplied by 2^-pos (lane_row_unscale), exactly. One shift a unit instead of one a
// code.
template <Precision P, int B>
HWY_INLINE void float_lane_dot(const std::uint8_t* units, int n_units, const LaneWeights<B>& w,
                               VF (&acc)[B][kLaneVecs]) {
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::RebindToUnsigned<DF> du;
  constexpr int bits = code_bits(P);
  constexpr int L = lane_rows(bits);
  // Independent accumulator sets, alternating by row, so that a small head batch does not
  // wait on the latency of its own FMA chain. Eight sets for one head (a 128-row key dot is
  // otherwise one chain of 32 FMAs a set), four for 2 or 3 heads; 4 heads keep two (three ran
  // out of registers and took twice as long).
  constexpr int chains = B * kLaneVecs;
  constexpr int sets = chains == 1 ? 8 : chains <= 3 ? 4 : std::max(1, 8 / chains);
  VF part[sets][B][kLaneVecs];
  for (auto& set : part)
    for (auto& row : set)
      for (VF& a : row) a = hn::Zero(df);
  for (int u = 0; u < n_units; ++u) {
    hn::Vec<decltype(du)> halves[2][kLaneVecs];
    for (int v = 0; v < kLaneVecs; ++v) {
      // Loaded in place (Highway's loads copy bytes, so the cast breaks no aliasing rule): a
      // copy into a uint32_t array first made AVX2 builds store the unit to the stack in
      // 16-byte halves and reload it whole, a stalled store forward every unit.
      halves[0][v] = hn::LoadU(du, reinterpret_cast<const std::uint32_t*>(
                                       units + std::size_t(u) * kLaneUnitBytes + v * kLanes * 4));
      halves[1][v] = hn::ShiftRight<16>(halves[0][v]);
    }
    for (int j = 0; j < 4; ++j) {
      for (int m = 0; m < 8 / bits; ++m) {
        const auto mask = hn::Set(du, ((1u << bits) - 1) << (8 * (j % 2) + m * bits));
        VF x[kLaneVecs];
        for (int v = 0; v < kLaneVecs; ++v) {
          x[v] = hn::ConvertTo(df, hn::BitCast(di, hn::And(halves[j / 2][v], mask)));
        }
        auto& set = part[(j * (8 / bits) + m) % sets];
        for (int h = 0; h < B; ++h) {
          const VF weight = hn::Set(df, w.rows[h][L * u + 4 * m + j]);
          for (int v = 0; v < kLaneVecs; ++v) set[h][v] = hn::MulAdd(weight, x[v], set[h][v]);
        }
      }
    }
  }
  add_pairwise<sets / 2>(part);
  for (int h = 0; h < B; ++h) {
    for (int v = 0; v < kLaneVecs; ++v) acc[h][v] = part[0][h][v];
  }
}

#if HWY_TARGET == HWY_SCALAR
// Declared for the branches that kIntegerLaneDots discards; never defined here.
template <int bits>
float quantize_row_pairs(const float* w, int n_rows, float wmax, std::int32_t* words);
template <Precision P, int B>
void int_lane_dot(const std::uint8_t* units, int n_units, const LaneWeights<B>& w,
                  VF (&acc)[B][kLaneVecs]);
#else

// Rows of lane-dot weights as int_lane_dot reads them. Each row is rounded to an int16 at one
// scale for all rows, as fine as the int32 sums allow: one sum holds the products of up to half
// the rows with codes masked where they sit, worth up to (2^bits - 1)·2^bits (int_lane_dot), so
// 32767 at the largest |w| for the head sizes models use, a rounding far below the codes' own.
// A 32-bit word holds rows r and r + 2 in its low and high halves, the two codes one lane of
// int_lane_dot holds side by side; it is stored at index r of words for r % 4 in {0, 1}
// (indices r % 4 in {2, 3} are left unused). Returns the scale that turns the integer dot back
// into the float one. wmax is the largest |w[r]|.
template <int bits>
float quantize_row_pairs(const float* w, int n_rows, float wmax, std::int32_t* words) {
  const DF df;
  const hn::RebindToSigned<DF> di;
  // In floats: an integer division here took a tenth of an INT2 tile's time on AVX2.
  const float limit = std::min(32767.0f, float(std::numeric_limits<std::int32_t>::max()) /
                                             float(n_rows * ((1 << bits) - 1) << (bits - 1)));
  const float to_int = wmax > 0.0f ? limit / wmax : 0.0f;
  // The bytes of each 16-byte block that make its words: lanes r, r + 1 of a 4-lane block take
  // the low halves of rows r, r + 2 and r + 1, r + 3 (the other two lanes repeat them, unused).
  const hn::Repartition<std::uint8_t, decltype(di)> d8;
  alignas(16) static constexpr std::uint8_t kPairBytes[16] = {0, 1, 8, 9, 4, 5, 12, 13,
                                                              0, 1, 8, 9, 4, 5, 12, 13};
  const auto pair_bytes = hn::LoadDup128(d8, kPairBytes);
  for (int r = 0; r < n_rows; r += int(kLanes)) {
    // Adding kRoundToInt rounds w·to_int to an integer (one rounding of the exact product),
    // whose low 16 bits are then the float's: the int16 half of the word, two instructions
    // where NearestInt needs six for range checks that |w·to_int| <= 32767 never trips.
    const auto q = hn::BitCast(
        d8, hn::MulAdd(hn::LoadU(df, w + r), hn::Set(df, to_int), hn::Set(df, kRoundToInt)));
    hn::StoreU(hn::BitCast(di, hn::TableLookupBytes(q, pair_bytes)), di, words + r);
  }
  return wmax / limit;
}

// acc[h][0..] = Σ_r w_h[r]·code[r][col], as float_lane_dot, from the 32-bit lanes of the units
// split into 16-bit codes: shifted down by 8j and masked in both halves, lane (col) holds the
// codes of rows 4m + j and 4m + j + 2, multiplied by one word of row weights and summed into an
// int32 per column in one instruction. Where two sums a head and column vector fit the
// registers (S = 2), planes come in pairs: after one shift the pair's lower plane is masked in
// place and the upper one where it sits, worth code·2^bits, into a second sum that one exact
// shift undoes at the end; a shift for every two planes instead of one a plane. Else (S = 1)
// each plane is shifted down. The sums serve every plane: a dot of a few units, as a small
// head's keys or a tile's values are, is not swamped by their setup.
template <Precision P, int B>
HWY_INLINE void int_lane_dot(const std::uint8_t* units, int n_units, const LaneWeights<B>& w,
                             VF (&acc)[B][kLaneVecs]) {
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::RebindToUnsigned<DF> du;
  const hn::Repartition<std::int16_t, decltype(di)> d16;
  using VI = hn::Vec<decltype(di)>;
  constexpr int bits = code_bits(P);
  constexpr int L = lane_rows(bits);
  constexpr int planes = 8 / bits;
  // Column vectors a pass: all of them where their sums leave registers for the codes, so that
  // each broadcast row weight serves every column vector; else one at a time.
  constexpr int V = B * kLaneVecs <= 6 ? kLaneVecs : 1;
  constexpr int S = 2 * B * V <= 8 ? 2 : 1;  // planes a shift, sums a head and column vector
  const auto low_codes = hn::Set(du, ((1u << bits) - 1) * 0x00010001u);
  const auto high_codes = hn::ShiftLeft<bits>(low_codes);
  for (int v0 = 0; v0 < kLaneVecs; v0 += V) {
    VI sum[S][B][V];
    VI odd[S][B][V];  // ReorderWidenMulAccumulate's second sums (NEON's upper halves)
    for (int k = 0; k < S; ++k)
      for (int h = 0; h < B; ++h)
        for (int v = 0; v < V; ++v) sum[k][h][v] = odd[k][h][v] = hn::Zero(di);
    for (int u = 0; u < n_units; ++u) {
      hn::Vec<decltype(du)> bytes[V][2];  // [v][j]: the lanes shifted by 8j, then by S·bits
      for (int v = 0; v < V; ++v) {
        bytes[v][0] = hn::LoadU(
            du, reinterpret_cast<const std::uint32_t*>(units + std::size_t(u) * kLaneUnitBytes +
                                                       std::size_t(v0 + v) * kLanes * 4));
        bytes[v][1] = hn::ShiftRight<8>(bytes[v][0]);
      }
      for (int m0 = 0; m0 < planes; m0 += S) {
#pragma GCC unroll 2
        for (int j = 0; j < 2; ++j) {
          for (int k = 0; k < S; ++k) {
            const auto mask = k == 0 ? low_codes : high_codes;
            hn::Vec<decltype(d16)> codes[V];
            for (int v = 0; v < V; ++v) codes[v] = hn::BitCast(d16, hn::And(bytes[v][j], mask));
            for (int h = 0; h < B; ++h) {
              const auto weight =
                  hn::BitCast(d16, hn::Set(di, w.words[h][L * u + 4 * (m0 + k) + j]));
              for (int v = 0; v < V; ++v) {
                sum[k][h][v] =
                    hn::ReorderWidenMulAccumulate(di, codes[v], weight, sum[k][h][v], odd[k][h][v]);
              }
            }
          }
          if (m0 + S < planes) {
            for (int v = 0; v < V; ++v) bytes[v][j] = hn::ShiftRight<bits * S>(bytes[v][j]);
          }
        }
      }
    }
    for (int h = 0; h < B; ++h) {
      for (int v = 0; v < V; ++v) {
        VI total = hn::RearrangeToOddPlusEven(sum[0][h][v], odd[0][h][v]);
        if constexpr (S == 2) {
          total = hn::Add(
              total, hn::ShiftRight<bits>(hn::RearrangeToOddPlusEven(sum[1][h][v], odd[1][h][v])));
        }
        acc[h][v0 + v] = hn::Mul(hn::ConvertTo(df, total), hn::Set(df, w.scale[h]));
      }
    }
  }
}

#endif  // HWY_TARGET == HWY_SCALAR

template <Precision P, int B>
HWY_INLINE void lane_dot(const std::uint8_t* units, int n_units, const LaneWeights<B>& w,
                         VF (&acc)[B][kLaneVecs]) {
  if constexpr (kIntegerLaneDots) {
    int_lane_dot<P, B>(units, n_units, w, acc);
  } else {
    float_lane_dot<P, B>(units, n_units, w, acc);
  }
}

// What float_lane_dot needs each row weight multiplied by: 2^-pos for a row's code position,
// by row mod 16 (a unit's L rows, repeated).
template <Precision P>
const float* lane_row_unscale() {
  constexpr int bits = code_bits(P);
  static constexpr auto table = [] {
    std::array<float, kLaneColumns> t{};
    for (int r = 0; r < kLaneColumns; ++r) {
      const int j = r % 4, m = (r % lane_rows(bits)) / 4;
      t[std::size_t(r)] = 1.0f / float(1 << (8 * (j % 2) + m * bits));
    }
    return t;
  }();
  return table.data();
}

// Keys: the storage view is [channel][token], so a row of lane units is 16 tokens and the row
// weights are the folded query, made beforehand (segment_tiles).
template <Precision P, int B>
void lane_key_scores(const TileFormat& f, const std::uint8_t* tile, const KeyFold& k, Scratch& s) {
  const DF df;
  const int T = f.tokens;
  const int D = f.head_dim;
  LaneWeights<B> w;
  for (int h = 0; h < B; ++h) {
    w.rows[h] = k.qm + h * D;
    w.words[h] = k.words + h * D;
    w.scale[h] = k.word_scale[h];
  }
  const int units = D / lane_rows(code_bits(P));
  for (int tb = 0; tb < T; tb += kLaneColumns) {
    VF acc[B][kLaneVecs];
    lane_dot<P, B>(tile + std::size_t(tb / kLaneColumns * units) * kLaneUnitBytes, units, w, acc);
    for (int h = 0; h < B; ++h) {
      const VF bias = hn::Set(df, k.bias[h]);
      for (int i = 0; i < kLaneVecs; ++i) {
        hn::StoreU(hn::Add(acc[h][i], bias), df, &s.scores[std::size_t(h * T + tb) + i * kLanes]);
      }
    }
  }
}

template <Precision P, int B>
void key_scores(const TileFormat& f, const std::uint8_t* tile, const float* q, Scratch& s) {
  const DF df;
  const int T = f.tokens;
  const int D = f.head_dim;
  const std::uint16_t* scales = as_halves(tile + f.key.scales_offset);
  const std::uint16_t* zeros = as_halves(tile + f.key.zeros_offset);
  constexpr bool has_zero = P == Precision::int8 || P == Precision::int4 || P == Precision::int2;

  if (P == Precision::fp16 || f.key_spec.axis == QuantAxis::per_channel) {
    const KeyFold k = s.fold(0);
    fold_key_constants<P, B>(f, tile, q, k);
    for (int tb = 0; tb < T; tb += kBlock) {
      VF acc[B][kVecs];
      for (auto& row : acc)
        for (VF& a : row) a = hn::Zero(df);
      key_dot<P, B>(tile, T, D, k.qm, 0, D, tb, acc);
      for (int h = 0; h < B; ++h) {
        const VF bias = hn::Set(df, k.bias[h]);
        for (int i = 0; i < kVecs; ++i) {
          hn::StoreU(hn::Add(acc[h][i], bias), df, &s.scores[std::size_t(h * T + tb) + i * kLanes]);
        }
      }
    }
    return;
  }
  // Per-token key groups: G channels of one token share a scale, so sum each group's raw
  // products first, then scale the group's partial sum per token.
  const int G = f.key_spec.group_size;
  const int groups = (D + G - 1) / G;
  for (int h = 0; h < B; ++h) {
    for (int g = 0; g < groups; ++g) {
      float sum = 0.0f;
      for (int c = g * G; c < std::min(D, (g + 1) * G); ++c) sum += q[h * D + c];
      s.extra[std::size_t(h * groups + g)] = sum;
    }
  }
  for (int tb = 0; tb < T; tb += kBlock) {
    VF score[B][kVecs];
    for (auto& row : score)
      for (VF& a : row) a = hn::Zero(df);
    for (int g = 0; g < groups; ++g) {
      VF acc[B][kVecs];
      for (auto& row : acc)
        for (VF& a : row) a = hn::Zero(df);
      key_dot<P, B>(tile, T, D, q, g * G, std::min(D, (g + 1) * G), tb, acc);
      for (int i = 0; i < kVecs; ++i) {
        const std::size_t at = std::size_t(g) * std::size_t(T) + std::size_t(tb) + i * kLanes;
        const VF scale = load_halves(scales + at);
        for (int h = 0; h < B; ++h) {
          score[h][i] = hn::MulAdd(scale, acc[h][i], score[h][i]);
          if constexpr (has_zero) {
            const VF qsum = hn::Set(df, s.extra[std::size_t(h * groups + g)]);
            score[h][i] = hn::MulAdd(load_halves(zeros + at), qsum, score[h][i]);
          }
        }
      }
    }
    for (int h = 0; h < B; ++h) {
      for (int i = 0; i < kVecs; ++i) {
        hn::StoreU(score[h][i], df, &s.scores[std::size_t(h * T + tb) + i * kLanes]);
      }
    }
  }
}

// Tail keys are FP16 and token-major: one dot product per token and head.
template <int B>
void tail_key_scores(const std::uint16_t* keys, int n, int D, const float* q, int T, Scratch& s) {
  const DF df;
  for (int t = 0; t < n; ++t) {
    VF acc[B];
    for (VF& a : acc) a = hn::Zero(df);
    for (int c = 0; c < D; c += int(kLanes)) {
      const VF k = load_halves(keys + std::size_t(t) * std::size_t(D) + std::size_t(c));
      for (int h = 0; h < B; ++h) acc[h] = hn::MulAdd(hn::LoadU(df, q + h * D + c), k, acc[h]);
    }
    for (int h = 0; h < B; ++h)
      s.scores[std::size_t(h * T + t)] = hn::GetLane(hn::SumOfLanes(df, acc[h]));
  }
}

// ---- online softmax over one tile of `valid` tokens; scores become probabilities ----

// e^x for x <= 0 (scores less their maximum); 2^-126 or less below x = -87.3. 2^(x·log2 e)
// splits into 2^k, put into the exponent bits, times 2^f, |f| <= 1/2, by a degree-5 fit at the
// Chebyshev nodes. Relative error 2.7e-7 for x in [-1, 0], growing with |x| (rounding x·log2 e)
// to 1.9e-6 at x = -30, where the weight is below 1e-13 of the largest. Half the instructions
// of hn::Exp, whose range checks and extra precision the softmax does not need.
HWY_INLINE VF exp_nonpositive(VF x) {
  const DF df;
  const hn::RebindToSigned<DF> di;
  const VF t = hn::Max(hn::Mul(x, hn::Set(df, 1.44269504f)), hn::Set(df, -126.0f));
  // Adding kRoundToInt rounds t to an integer k and leaves k in the low mantissa bits, so 2^k
  // needs an integer add and a shift, not a conversion to integer.
  const VF round = hn::Set(df, kRoundToInt);
  const VF rounded = hn::Add(t, round);
  const VF f = hn::Sub(t, hn::Sub(rounded, round));
  VF p = hn::Set(df, 0.00133908633f);
  p = hn::MulAdd(p, f, hn::Set(df, 0.00967603177f));
  p = hn::MulAdd(p, f, hn::Set(df, 0.0555035695f));
  p = hn::MulAdd(p, f, hn::Set(df, 0.240221068f));
  p = hn::MulAdd(p, f, hn::Set(df, 0.693147182f));
  p = hn::MulAdd(p, f, hn::Set(df, 1.00000012f));
  // The bits of `rounded` are 0x4B400000 + k, whose shift by 23 drops all but k.
  const auto two_k = hn::ShiftLeft<23>(hn::Add(hn::BitCast(di, rounded), hn::Set(di, 127)));
  return hn::Mul(p, hn::BitCast(df, two_k));
}

// The heads of a batch go through each step together, so that their independent chains
// overlap and one branch serves them all. kT is the tile length when known at compile time (the
// default 32-token tile: every loop unrolled, the row maxima kept in registers), else 0.
template <int B, int kT>
HWY_INLINE void softmax_step(int T, int valid, float* m, Scratch& s) {
  const DF df;
  if constexpr (kT > 0) T = kT;
  const int n = T / int(kLanes);
  float* scores = s.scores.data();
  if (valid < T) {
    for (int h = 0; h < B; ++h) std::fill(scores + h * T + valid, scores + (h + 1) * T, kMasked);
  }
  VF vmax[B];
  for (int h = 0; h < B; ++h) {
    vmax[h] = hn::LoadU(df, scores + h * T);
    for (int i = 1; i < n; ++i)
      vmax[h] = hn::Max(vmax[h], hn::LoadU(df, scores + h * T + i * kLanes));
  }
  // Most tiles after the first keep every head's running maximum: one compare a head shows
  // it, where finding a new maximum takes a reduction across lanes.
  auto raised = hn::Gt(vmax[0], hn::Set(df, m[0]));
  for (int h = 1; h < B; ++h) raised = hn::Or(raised, hn::Gt(vmax[h], hn::Set(df, m[h])));
  if (HWY_UNLIKELY(!hn::AllFalse(df, raised))) {
    for (int h = 0; h < B; ++h) {
      const float m_new = std::max(m[h], hn::GetLane(hn::MaxOfLanes(df, vmax[h])));
      // 0 on the first tile (m = -inf).
      s.factor[h] = m_new == m[h] ? 1.0f : std::exp(m[h] - m_new);
      m[h] = m_new;
      float* zero = &s.zero_lanes[std::size_t(h * s.value_groups) * kLanes];
      for (int g = 0; g < s.value_groups; ++g) {
        const VF z = hn::LoadU(df, zero + g * kLanes);
        hn::StoreU(hn::Mul(z, hn::Set(df, s.factor[h])), df, zero + g * kLanes);
      }
    }
  } else {
    for (int h = 0; h < B; ++h) s.factor[h] = 1.0f;
  }
  VF vsum[B];
  for (int h = 0; h < B; ++h) {
    const VF shift = hn::Set(df, m[h]);
    vsum[h] = hn::Zero(df);
    for (int i = 0; i < n; ++i) {
      const int t = i * int(kLanes);
      float* at = scores + h * T + t;
      VF p = exp_nonpositive(hn::Sub(hn::LoadU(df, at), shift));
      // Padding must weigh exactly nothing.
      if (t + int(kLanes) > valid)
        p = hn::IfThenElseZero(hn::FirstN(df, std::size_t(std::max(valid - t, 0))), p);
      hn::StoreU(p, df, at);
      vsum[h] = hn::Add(vsum[h], p);
    }
  }
  for (int h = 0; h < B; ++h) {
    float* l = s.lane_sums[h];
    hn::Store(hn::MulAdd(hn::Load(df, l), hn::Set(df, s.factor[h]), vsum[h]), df, l);
  }
}

template <int B>
HWY_INLINE void softmax_update(int T, int valid, float* m, Scratch& s) {
  if (T == kBlock) return softmax_step<B, kBlock>(T, valid, m, s);
  softmax_step<B, 0>(T, valid, m, s);
}

// ---- values: o_h = o_h · factor_h + Σ_t p_ht v_t ----

// Value constants of one tile. Per-token groups: weights[h][g][t] = p_ht · s_gt (times
// row_unscale[t % 16] for the float lane dot), and Σ_t p_ht · z_gt added to s.zero_lanes; with
// kWeightMax, max_t |weights[h][g][t]| in s.weight_max[h][g] too (for quantize_row_pairs).
// Per-channel: the probabilities themselves, and their sum for the zero term. FP16: the
// probabilities.
struct ValueTerms {
  const float* weights = nullptr;
  int groups = 1;
  const std::uint16_t* channel_scales = nullptr;  // per-channel groups only
  const std::uint16_t* channel_zeros = nullptr;
  float p_sum[8] = {};
};

template <Precision P, int B, bool kWeightMax = false>
ValueTerms value_terms(const std::uint16_t* scales, const std::uint16_t* zeros, QuantAxis axis,
                       int group_size, int T, int valid, int D, Scratch& s,
                       const float* row_unscale = nullptr) {
  const DF df;
  constexpr bool has_zero = P == Precision::int8 || P == Precision::int4 || P == Precision::int2;
  ValueTerms v;
  if (P == Precision::fp16 || axis == QuantAxis::per_channel) {
    v.weights = s.scores.data();
    if constexpr (P != Precision::fp16) {
      v.channel_scales = scales;
      if constexpr (has_zero) {
        v.channel_zeros = zeros;
        for (int h = 0; h < B; ++h) {
          for (int t = 0; t < valid; ++t) v.p_sum[h] += s.scores[std::size_t(h * T + t)];
        }
      }
    }
    return v;
  }
  // Each token's scale (and zero) is widened once and serves every head of the batch. The
  // buffers are read through locals: Highway's stores may alias anything, so s.weights' own
  // pointer would be reloaded after each one.
  v.groups = (D + group_size - 1) / group_size;
  const float* scores = s.scores.data();
  float* weights = s.weights.data();
  v.weights = weights;
  for (int g = 0; g < v.groups; ++g) {
    const std::size_t row = std::size_t(g) * std::size_t(T);
    VF zero_sum[B];
    VF vmax[B];
    for (int h = 0; h < B; ++h) zero_sum[h] = vmax[h] = hn::Zero(df);
    for (int t = 0; t < T; t += int(kLanes)) {
      VF scale = load_halves(scales + row + std::size_t(t));
      if (row_unscale) scale = hn::Mul(scale, hn::LoadU(df, row_unscale + t % kLaneColumns));
      const VF zero = has_zero ? load_halves(zeros + row + std::size_t(t)) : hn::Zero(df);
      for (int h = 0; h < B; ++h) {
        const VF pv = hn::LoadU(df, scores + std::size_t(h * T + t));
        const VF weight = hn::Mul(pv, scale);
        hn::StoreU(weight, df,
                   weights + std::size_t(h * v.groups + g) * std::size_t(T) + std::size_t(t));
        if constexpr (kWeightMax) vmax[h] = hn::Max(vmax[h], hn::Abs(weight));
        if constexpr (has_zero) zero_sum[h] = hn::MulAdd(pv, zero, zero_sum[h]);
      }
    }
    if constexpr (kWeightMax) {
      for (int h = 0; h < B; ++h) {
        s.weight_max[std::size_t(h * v.groups + g)] = hn::GetLane(hn::MaxOfLanes(df, vmax[h]));
      }
    }
    if constexpr (has_zero) {
      for (int h = 0; h < B; ++h) {
        float* lanes = &s.zero_lanes[std::size_t(h * s.value_groups + g) * kLanes];
        hn::StoreU(hn::Add(hn::LoadU(df, lanes), zero_sum[h]), df, lanes);
      }
    }
  }
  return v;
}

// The value pass, `span` channels at a time: wide spans decode whole INT2 units at once when
// the head batch leaves registers for the accumulators.
template <Precision P, int B, int span>
void value_pass(const std::uint8_t* codes, const ValueTerms& v, int group_size, int T, int valid,
                int D, float* o, const Scratch& s) {
  const DF df;
  constexpr int vecs = int(span / kLanes);
  constexpr int blocks = span / kBlock;
  for (int db = 0; db < D; db += span) {
    int group[blocks];
    for (int j = 0; j < blocks; ++j) group[j] = v.groups > 1 ? (db + j * kBlock) / group_size : 0;
    VF acc[B][vecs];
    for (auto& row : acc)
      for (VF& a : row) a = hn::Zero(df);
    for (int t = 0; t < valid; ++t) {
      VF code[vecs];
      decode_span<P, span>(codes, std::size_t(t) * std::size_t(D) + std::size_t(db), code);
      for (int h = 0; h < B; ++h) {
        for (int j = 0; j < blocks; ++j) {
          const VF w = hn::Set(
              df,
              v.weights[std::size_t(h * v.groups + group[j]) * std::size_t(T) + std::size_t(t)]);
          for (int i = 0; i < kVecs; ++i) {
            acc[h][j * kVecs + i] = hn::MulAdd(w, code[j * kVecs + i], acc[h][j * kVecs + i]);
          }
        }
      }
    }
    for (int h = 0; h < B; ++h) {
      const VF factor = hn::Set(df, s.factor[h]);
      for (int i = 0; i < vecs; ++i) {
        const std::size_t d = std::size_t(db) + i * kLanes;
        VF value = hn::Mul(acc[h][i], hn::Set(df, span_unscale<P, span>(i)));
        if (v.channel_scales) {  // per-channel scale and zero, applied once per tile
          value = hn::Mul(load_halves(v.channel_scales + d), value);
          if (v.channel_zeros) {
            value = hn::MulAdd(load_halves(v.channel_zeros + d), hn::Set(df, v.p_sum[h]), value);
          }
        }
        float* out = o + std::size_t(h * D) + d;
        hn::StoreU(hn::MulAdd(hn::LoadU(df, out), factor, value), df, out);
      }
    }
  }
}

template <Precision P, int B>
void accumulate_values(const std::uint16_t* scales, const std::uint16_t* zeros, QuantAxis axis,
                       int group_size, const std::uint8_t* codes, int T, int valid, int D, float* o,
                       Scratch& s) {
  const ValueTerms v = value_terms<P, B>(scales, zeros, axis, group_size, T, valid, D, s);
  constexpr int wide = std::max(kUnitCodes<P>, kBlock);
  if constexpr (wide > kBlock && B <= 4) {
    if (D % wide == 0) {
      return value_pass<P, B, wide>(codes, v, group_size, T, valid, D, o, s);
    }
  }
  value_pass<P, B, kBlock>(codes, v, group_size, T, valid, D, o, s);
}

// Lane-packed values: the storage view is [token][channel], so a row of lane units is 16
// channels (inside one group) and the row weights are that group's p_t·s_gt.
template <Precision P, int B>
void lane_values(const TileFormat& f, const std::uint8_t* values, int valid, float* o, Scratch& s) {
  const DF df;
  const int T = f.tokens;
  const int D = f.head_dim;
  const int G = f.value_spec.group_size;
  const ValueTerms v = value_terms<P, B, kIntegerLaneDots>(
      as_halves(values + f.value.scales_offset), as_halves(values + f.value.zeros_offset),
      QuantAxis::per_token, G, T, valid, D, s, kIntegerLaneDots ? nullptr : lane_row_unscale<P>());
  const int units = T / lane_rows(code_bits(P));
  for (int g = 0; g < v.groups; ++g) {
    LaneWeights<B> w;
    for (int h = 0; h < B; ++h) {
      w.rows[h] = v.weights + std::size_t(h * v.groups + g) * std::size_t(T);
      if constexpr (kIntegerLaneDots) {
        std::int32_t* words = s.value_words.data() + std::size_t(h * T);
        w.scale[h] = quantize_row_pairs<code_bits(P)>(
            w.rows[h], T, s.weight_max[std::size_t(h * v.groups + g)], words);
        w.words[h] = words;
      }
    }
    for (int cb = g * G; cb < std::min(D, (g + 1) * G); cb += kLaneColumns) {
      VF acc[B][kLaneVecs];
      const std::uint8_t* column_units =
          values + std::size_t(cb / kLaneColumns * units) * kLaneUnitBytes;
      // The default tile's unit count as a constant, so that its short dot is unrolled.
      if (T == kBlock) {
        lane_dot<P, B>(column_units, kBlock / lane_rows(code_bits(P)), w, acc);
      } else {
        lane_dot<P, B>(column_units, units, w, acc);
      }
      for (int h = 0; h < B; ++h) {
        const VF factor = hn::Set(df, s.factor[h]);
        for (int i = 0; i < kLaneVecs; ++i) {
          float* out = o + std::size_t(h * D + cb) + i * kLanes;
          hn::StoreU(hn::MulAdd(hn::LoadU(df, out), factor, acc[h][i]), df, out);
        }
      }
    }
  }
}

// ---- drivers ----

template <Precision P, int B>
void tile_values(const TileFormat& f, const std::uint8_t* tile, int valid, float* o, Scratch& s) {
  const std::uint8_t* values = tile + f.value_offset;
  if constexpr (P == Precision::int4 || P == Precision::int2) {
    if (f.value.packing == CodePacking::lanes) return lane_values<P, B>(f, values, valid, o, s);
  }
  accumulate_values<P, B>(as_halves(values + f.value.scales_offset),
                          as_halves(values + f.value.zeros_offset), f.value_spec.axis,
                          f.value_spec.group_size, values, f.tokens, valid, f.head_dim, o, s);
}

// Asks for the cache lines of a tile a third at a time (k = 0, 1, 2; nothing if data is null).
// Asking for a whole tile at once fills the core's line fill buffers, and it stalls until they
// drain. The thirds are sized once per segment, off the tile loop. kLocality is
// __builtin_prefetch's: 3 into the L1 (prefetcht0), 2 into the L2 only (prefetcht1).
template <int kLocality>
class ThirdsPrefetch {
 public:
  explicit ThirdsPrefetch(std::size_t bytes)
      : bytes_(bytes), third_(round_up((bytes + 2) / 3, kCacheLine)) {}
  HWY_INLINE void ask(const std::uint8_t* data, int k) const {
    if (data == nullptr) return;
    const std::size_t end = std::min(bytes_, std::size_t(k + 1) * third_);
#pragma GCC unroll 4
    for (std::size_t b = std::size_t(k) * third_; b < end; b += kCacheLine) {
      __builtin_prefetch(data + b, 0, kLocality);
    }
  }

 private:
  std::size_t bytes_;
  std::size_t third_;
};

template <Precision P, int B>
void segment_tiles(const SegmentView& seg, std::int64_t first, std::int64_t last,
                   const RangeTask& task, int h0, Scratch& s) {
  const TileFormat& f = *seg.format;
  const float* q = task.q + std::size_t(h0 * task.head_dim);
  float* o = task.o + std::size_t(h0 * task.head_dim);
  // Lane-packed keys fold the next tile's key constants right after this tile's key dots, where
  // they are independent work at the head of this tile's softmax chain (placed after the softmax
  // step, the same early fold gains nothing).
  constexpr bool lane_capable = P == Precision::int4 || P == Precision::int2;
  const bool fold_ahead = lane_capable && f.key.packing == CodePacking::lanes;
  auto fold = [&](std::int64_t i) {
    if constexpr (lane_capable) {
      const KeyFold k = s.fold(int(i % 2));
      const std::uint8_t* tile = seg.data + std::size_t(i) * f.bytes;
      if constexpr (kIntegerLaneDots) {
        fold_key_constants<P, B>(f, tile, q, k);
        for (int h = 0; h < B; ++h) {
          const std::size_t row = std::size_t(h * f.head_dim);
          k.word_scale[h] =
              quantize_row_pairs<code_bits(P)>(k.qm + row, f.head_dim, k.qm_max[h], k.words + row);
        }
      } else {
        fold_key_constants<P, B>(f, tile, q, k, lane_row_unscale<P>());
      }
    }
  };
  if (fold_ahead) fold(first);
  // INT2 tiles, the most arithmetic a byte, are asked into the L2 only: their lines then hold no
  // L1 fill buffer while they come from memory (architecture.md, "Prefetching").
  const ThirdsPrefetch<P == Precision::int2 ? 2 : 3> next_tiles(f.bytes);
  for (std::int64_t i = first; i < last; ++i) {
    const std::uint8_t* tile = seg.data + std::size_t(i) * f.bytes;
    // Ask for the tile after next while this one is computed, a third at each of its three
    // steps (architecture.md, "Prefetching"). FP16 tiles too: one stream of 16 KiB tiles left to
    // the hardware prefetcher read slower than the FP16 tail's two streams on an Intel Xeon.
    const std::uint8_t* ahead = i + 2 < last ? tile + 2 * f.bytes : nullptr;
    next_tiles.ask(ahead, 0);
    s.late.step();
    if constexpr (lane_capable) {
      if (fold_ahead) {
        lane_key_scores<P, B>(f, tile, s.fold(int(i % 2)), s);
        if (i + 1 < last) fold(i + 1);
      }
    }
    if (!fold_ahead) key_scores<P, B>(f, tile, q, s);
    next_tiles.ask(ahead, 1);
    softmax_update<B>(f.tokens, seg.tiles[i].valid, task.m + h0, s);
    next_tiles.ask(ahead, 2);
    tile_values<P, B>(f, tile, seg.tiles[i].valid, o, s);
  }
}

template <int B>
void tail_tiles(std::int64_t first, std::int64_t last, const RangeTask& task, int h0, Scratch& s) {
  const int T = task.tile_tokens;
  const int D = task.head_dim;
  const float* q = task.q + std::size_t(h0 * D);
  float* o = task.o + std::size_t(h0 * D);
  for (std::int64_t i = first; i < last; ++i) {
    const std::int64_t t0 = i * T;
    const int valid = int(std::min<std::int64_t>(T, task.tail_visible - t0));
    const std::size_t offset = std::size_t(t0) * std::size_t(D);
    tail_key_scores<B>(task.head->tail_keys + offset, valid, D, q, T, s);
    softmax_update<B>(T, valid, task.m + h0, s);
    accumulate_values<Precision::fp16, B>(
        nullptr, nullptr, QuantAxis::per_token, T,
        reinterpret_cast<const std::uint8_t*>(task.head->tail_values + offset), T, valid, D, o, s);
  }
}

template <int B>
void run_segment(const SegmentView& seg, std::int64_t first, std::int64_t last,
                 const RangeTask& task, int h0, Scratch& s) {
  switch (seg.format->precision) {
    case Precision::fp16:
      return segment_tiles<Precision::fp16, B>(seg, first, last, task, h0, s);
    case Precision::int8:
      return segment_tiles<Precision::int8, B>(seg, first, last, task, h0, s);
    case Precision::nf4:
      return segment_tiles<Precision::nf4, B>(seg, first, last, task, h0, s);
    case Precision::int4:
      return segment_tiles<Precision::int4, B>(seg, first, last, task, h0, s);
    case Precision::int2:
      return segment_tiles<Precision::int2, B>(seg, first, last, task, h0, s);
  }
}

// Every tile of the task, for the query heads h0 .. h0 + B: the quantized segments first, with
// the FP16 tiles and the tail prefetched behind them (LatePrefetch), then those. The online
// softmax does not depend on the order.
template <int B>
void tiles_of_batch(const RangeTask& task, int h0, Scratch& s) {
  // Calls fn(segment, first, last) for the task's part of each FP16 (or each other) segment
  // and returns the number of segment tiles.
  auto for_parts = [&task](bool fp16, auto&& fn) {
    std::int64_t base = 0;
    for (const SegmentView& seg : task.head->segments) {
      const std::int64_t first = std::max<std::int64_t>(task.begin - base, 0);
      const std::int64_t last = std::min<std::int64_t>(task.end - base, seg.n_tiles);
      base += seg.n_tiles;
      if (first < last && (seg.format->precision == Precision::fp16) == fp16) fn(seg, first, last);
    }
    return base;
  };
  s.late = LatePrefetch{};
  const std::int64_t segment_tiles =
      for_parts(true, [&s](const SegmentView& seg, std::int64_t first, std::int64_t last) {
        s.late.add(seg.data + std::size_t(first) * seg.format->bytes,
                   std::size_t(last - first) * seg.format->bytes);
      });
  const std::int64_t tail_first = std::max<std::int64_t>(task.begin - segment_tiles, 0);
  const std::int64_t tail_last = task.end - segment_tiles;
  if (tail_first < tail_last) {
    const std::int64_t t0 = tail_first * task.tile_tokens;
    const std::int64_t t1 = std::min(tail_last * task.tile_tokens, task.tail_visible);
    const std::size_t offset = std::size_t(t0) * std::size_t(task.head_dim);
    const std::size_t bytes =
        std::size_t(t1 - t0) * std::size_t(task.head_dim) * sizeof(std::uint16_t);
    s.late.add(task.head->tail_keys + offset, bytes);
    s.late.add(task.head->tail_values + offset, bytes);
  }
  std::int64_t quantized_tiles = 0;
  for_parts(false, [&](const SegmentView&, std::int64_t first, std::int64_t last) {
    quantized_tiles += last - first;
  });
  s.late.pace_over(quantized_tiles);
  auto run = [&](const SegmentView& seg, std::int64_t first, std::int64_t last) {
    run_segment<B>(seg, first, last, task, h0, s);
  };
  for_parts(false, run);
  s.late.stop();
  for_parts(true, run);
  if (tail_first < tail_last) tail_tiles<B>(tail_first, tail_last, task, h0, s);
}

// One head batch over the task's tiles: m and l in the task are read and updated.
template <int B>
void run_batch(const RangeTask& task, int h0, Scratch& s) {
  const DF df;
  for (int h = 0; h < B; ++h) {
    hn::Store(hn::Zero(df), df, s.lane_sums[h]);
    s.lane_sums[h][0] = task.l[h0 + h];
  }
  std::fill(s.zero_lanes.begin(), s.zero_lanes.end(), 0.0f);
  tiles_of_batch<B>(task, h0, s);
  const int D = task.head_dim;
  const int G = task.tile_tokens;  // a value group is as wide as a tile is long
  for (int h = 0; h < B; ++h) {
    task.l[h0 + h] = hn::GetLane(hn::SumOfLanes(df, hn::Load(df, s.lane_sums[h])));
    float* o = task.o + std::size_t((h0 + h) * D);
    for (int g = 0; g < s.value_groups; ++g) {
      const float zero_sum = hn::GetLane(hn::SumOfLanes(
          df, hn::LoadU(df, &s.zero_lanes[std::size_t(h * s.value_groups + g) * kLanes])));
      for (int d = g * G; d < std::min(D, (g + 1) * G); ++d) o[d] += zero_sum;
    }
  }
}

void AttendRange(const RangeTask& task) {
  const int T = task.tile_tokens;
  const int D = task.head_dim;
  const int batch_max = std::min(task.n_heads, 8);
  Scratch s;
  s.scores.resize(std::size_t(batch_max * T));
  const int value_groups = std::max(1, (D + T - 1) / T);
  s.value_groups = value_groups;
  s.zero_lanes.resize(std::size_t(batch_max * value_groups) * kLanes);
  s.weights.resize(std::size_t(batch_max * T * value_groups));
  s.qm_stride = std::size_t(batch_max * D);
  s.qm.resize(2 * s.qm_stride);
  s.key_words.resize(2 * s.qm_stride);
  s.value_words.resize(std::size_t(batch_max * T));
  s.weight_max.resize(std::size_t(batch_max * value_groups));
  s.extra.resize(std::size_t(batch_max * D));
  // Query heads in batches of 8, 4, 3, 2, 1: each batch shares one decode of every code. A
  // batch of 3 serves GQA groups of 3 (SmolLM2) in one pass instead of two.
  for (int h0 = 0; h0 < task.n_heads;) {
    const int left = task.n_heads - h0;
    if (left >= 8) {
      run_batch<8>(task, h0, s);
      h0 += 8;
    } else if (left >= 4) {
      run_batch<4>(task, h0, s);
      h0 += 4;
    } else if (left == 3) {
      run_batch<3>(task, h0, s);
      h0 += 3;
    } else if (left >= 2) {
      run_batch<2>(task, h0, s);
      h0 += 2;
    } else {
      run_batch<1>(task, h0, s);
      h0 += 1;
    }
  }
}

const char* TargetName() {
  return hwy::TargetName(HWY_TARGET);
}

bool IntegerLaneDots() {
  return kIntegerLaneDots;
}

}  // namespace HWY_NAMESPACE
}  // namespace cocktail::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cocktail::cpu {

HWY_EXPORT(AttendRange);
HWY_EXPORT(TargetName);
HWY_EXPORT(IntegerLaneDots);

void attend_range(const RangeTask& task) {
  HWY_DYNAMIC_DISPATCH(AttendRange)(task);
}

const char* simd_target_name() {
  return HWY_DYNAMIC_DISPATCH(TargetName)();
}

bool integer_lane_dots() {
  return HWY_DYNAMIC_DISPATCH(IntegerLaneDots)();
}

std::int64_t count_tiles(const HeadView& head, std::int64_t tail_visible, int tile_tokens) {
  std::int64_t n = 0;
  for (const SegmentView& seg : head.segments) n += seg.n_tiles;
  return n + (tail_visible + tile_tokens - 1) / tile_tokens;
}

}  // namespace cocktail::cpu
#endif
