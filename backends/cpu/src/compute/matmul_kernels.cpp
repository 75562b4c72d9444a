// Matmul kernels, y = x · wᵀ, for weights in GGUF block formats.
//
// GEMM: a task packs a panel of weight rows once and reuses it for all of its tokens in a
// register-blocked micro-kernel.
//  - Integer path (AVX-512 VNNI; q4_0, q4_1, q8_0, q4_k). A 32-element weight block is
//    unsigned 8-bit codes c with a float scale d and offset m (w = d·c + m); activations are
//    8- or 16-bit integers q with scale dx and s = dx·Σq per block (quantize_activations). A
//    block then adds d·dx·Σ c·q + m·s. The panel interleaves 16 rows by 32-bit lanes of codes
//    (4 for vpdpbusd against 8-bit activations, 2 widened ones for vpdpwssd against 16-bit),
//    so one instruction against a broadcast lane of activations gives 16 rows' partial sums
//    with no horizontal adds. Packing gathers the same 4 bytes of 16 rows at once.
//  - Float path (every other target, and q6_k, f16, bf16, f32). The panel is 2 vectors of rows
//    decoded to float, stored column by column; each step loads one column and broadcasts one
//    activation per token.
//
// GEMV (decode: up to kGemvMaxTokens tokens) streams each weight row once, prefetching the next
// row tile (see its section), and wants the fewest operations per block. The float GEMV
// decodes its 32-element chunks to floats in registers (scale and offset applied) and dots them
// with every token; the integer GEMV (VNNI; q4_0, q4_1, q8_0) dots a block's codes with quantized
// activations in integers, Q4 blocks of 4 rows in one vector (see its section).

#include "compute/matmul_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "cocktail/dequantize.hpp"
#include "cocktail/error.hpp"

// Highway compiles this file once per SIMD target: the order of these lines matters.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "compute/matmul_kernels.cpp"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
// clang-format on
#include <hwy/cache_control.h>

HWY_BEFORE_NAMESPACE();
namespace cocktail::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// At most 16 lanes, so a 32-element block is a whole number of vectors.
using DF = hn::CappedTag<float, 16>;
using VF = hn::Vec<DF>;
constexpr int kLanes = int(hn::MaxLanes(DF()));
constexpr int kBlock = 32;
constexpr int kBlockVecs = kBlock / kLanes;

// The fp16 value at p (a block's scale or offset): one conversion instruction where the
// target has F16C, rather than scalar bit arithmetic.
float half_at(const std::uint8_t* p) {
  const hn::CappedTag<float, 1> d;
  const hn::Rebind<hwy::float16_t, decltype(d)> dh;
  return hn::GetLane(hn::PromoteTo(d, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p))));
}

const std::uint8_t* row_at(const WeightView& w, std::int64_t r) {
  return reinterpret_cast<const std::uint8_t*>(w.data) + std::size_t(r) * row_bytes(w.type, w.cols);
}

// Rows the kernels decode 32 elements at a time in registers: every type but plain floats
// with rows of a length not a multiple of 32, which go through the reference dequantizer.
bool decodes_in_registers(const WeightView& w) {
  return info(w.type).block_elements > 1 || w.cols % kBlock == 0;
}

// Calls f(std::integral_constant<TensorType, T>()) for the run-time type t.
template <class F>
HWY_INLINE void with_type(TensorType t, const F& f) {
  switch (t) {
    case TensorType::f32:
      return f(std::integral_constant<TensorType, TensorType::f32>());
    case TensorType::f16:
      return f(std::integral_constant<TensorType, TensorType::f16>());
    case TensorType::bf16:
      return f(std::integral_constant<TensorType, TensorType::bf16>());
    case TensorType::q8_0:
      return f(std::integral_constant<TensorType, TensorType::q8_0>());
    case TensorType::q4_0:
      return f(std::integral_constant<TensorType, TensorType::q4_0>());
    case TensorType::q4_1:
      return f(std::integral_constant<TensorType, TensorType::q4_1>());
    case TensorType::q4_k:
      return f(std::integral_constant<TensorType, TensorType::q4_k>());
    case TensorType::q6_k:
      return f(std::integral_constant<TensorType, TensorType::q6_k>());
  }
}

// Elements [k, k + 32) of a row as floats, scale and offset applied; k is a multiple of 32.
template <TensorType T>
HWY_INLINE void decode_chunk(const std::uint8_t* row, std::int64_t k, VF (&w)[kBlockVecs]) {
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::RebindToUnsigned<DF> du;
  const hn::Rebind<std::uint8_t, DF> d8;
  constexpr TensorTypeInfo ti = info(T);
  const std::uint8_t* p = row + k / ti.block_elements * ti.block_bytes;
  const int j = int(k % ti.block_elements) / kBlock;  // 32-element chunk within a K-quant block
  if constexpr (T == TensorType::f32) {
    for (int i = 0; i < kBlockVecs; ++i) {
      w[i] = hn::LoadU(df, reinterpret_cast<const float*>(p) + i * kLanes);
    }
  } else if constexpr (T == TensorType::f16) {
    const hn::Rebind<hwy::float16_t, DF> dh;
    for (int i = 0; i < kBlockVecs; ++i) {
      w[i] =
          hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p) + i * kLanes));
    }
  } else if constexpr (T == TensorType::bf16) {
    const hn::Rebind<std::uint16_t, DF> d16;
    for (int i = 0; i < kBlockVecs; ++i) {
      const auto bits =
          hn::PromoteTo(du, hn::LoadU(d16, reinterpret_cast<const std::uint16_t*>(p) + i * kLanes));
      w[i] = hn::BitCast(df, hn::ShiftLeft<16>(bits));
    }
  } else if constexpr (T == TensorType::q8_0) {
    const hn::Rebind<std::int8_t, DF> ds8;
    const VF d = hn::Set(df, half_at(p));
    const auto* qs = reinterpret_cast<const std::int8_t*>(p + 2);
    for (int i = 0; i < kBlockVecs; ++i) {
      w[i] = hn::Mul(d, hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(ds8, qs + i * kLanes))));
    }
  } else if constexpr (T == TensorType::q4_0 || T == TensorType::q4_1) {
    // Byte j holds element j in its low nibble and element j + 16 in its high one.
    const VF d = hn::Set(df, half_at(p));
    const VF m =
        T == TensorType::q4_1 ? hn::Set(df, half_at(p + 2)) : hn::Mul(d, hn::Set(df, -8.0f));
    const std::uint8_t* qs = p + (T == TensorType::q4_1 ? 4 : 2);
    for (int i = 0; i < kBlockVecs / 2; ++i) {
      const auto bytes = hn::PromoteTo(du, hn::LoadU(d8, qs + i * kLanes));
      const auto low = hn::BitCast(di, hn::And(bytes, hn::Set(du, 0x0F)));
      const auto high = hn::BitCast(di, hn::ShiftRight<4>(bytes));
      w[i] = hn::MulAdd(hn::ConvertTo(df, low), d, m);
      w[i + kBlockVecs / 2] = hn::MulAdd(hn::ConvertTo(df, high), d, m);
    }
  } else if constexpr (T == TensorType::q4_k) {
    // Chunks 2c and 2c + 1 are the low and high nibbles of the same 32 bytes.
    const auto [scale, min] = q4_k_scale_min(p + 4, j);
    const VF d = hn::Set(df, half_at(p) * float(scale));
    const VF m = hn::Set(df, -half_at(p + 2) * float(min));
    const std::uint8_t* qs = p + 16 + j / 2 * 32;
    for (int i = 0; i < kBlockVecs; ++i) {
      const auto bytes = hn::PromoteTo(du, hn::LoadU(d8, qs + i * kLanes));
      const auto code = hn::And(hn::ShiftRightSame(bytes, 4 * (j % 2)), hn::Set(du, 0x0F));
      w[i] = hn::MulAdd(hn::ConvertTo(df, hn::BitCast(di, code)), d, m);
    }
  } else {
    static_assert(T == TensorType::q6_k);
    // Chunk j = 4h + c of half h: low 4 bits from the low (c < 2) or high nibbles of
    // ql[64h + 32(c % 2) ...], high 2 bits from bits 2c of qh[32h ...]; a scale per 16.
    const int h = j / 4;
    const int c = j % 4;
    const std::uint8_t* ql = p + 64 * h + 32 * (c % 2);
    const std::uint8_t* qh = p + 128 + 32 * h;
    const auto* scales = reinterpret_cast<const std::int8_t*>(p + 192) + 8 * h + 2 * c;
    const float d = half_at(p + 208);
    for (int i = 0; i < kBlockVecs; ++i) {
      const auto low = hn::And(
          hn::ShiftRightSame(hn::PromoteTo(du, hn::LoadU(d8, ql + i * kLanes)), 4 * (c / 2)),
          hn::Set(du, 0x0F));
      const auto high =
          hn::And(hn::ShiftRightSame(hn::PromoteTo(du, hn::LoadU(d8, qh + i * kLanes)), 2 * c),
                  hn::Set(du, 3));
      const auto q = hn::Sub(hn::BitCast(di, hn::Or(low, hn::ShiftLeft<4>(high))), hn::Set(di, 32));
      w[i] = hn::Mul(hn::ConvertTo(df, q), hn::Set(df, d * float(scales[i * kLanes / 16])));
    }
  }
}

// Row r of w as floats in out[0, w.cols).
void decode_row(const WeightView& w, std::int64_t r, float* out) {
  if (!decodes_in_registers(w)) {
    return dequantize_row(w.type, reinterpret_cast<const std::byte*>(row_at(w, r)), w.cols, out);
  }
  with_type(w.type, [&](auto type) {
    const DF df;
    for (std::int64_t k = 0; k < w.cols; k += kBlock) {
      VF v[kBlockVecs];
      decode_chunk<decltype(type)::value>(row_at(w, r), k, v);
      for (int i = 0; i < kBlockVecs; ++i) hn::StoreU(v[i], df, out + k + i * kLanes);
    }
  });
}

// Calls tile(std::integral_constant<int, NT>(), t) for t = begin, begin + NT, ... and then
// once more with the remainder (fewer than NT tokens) as its own compile-time tile width.
template <int NT, class Tile>
HWY_INLINE void remainder_tile(std::int64_t t, std::int64_t end, const Tile& tile) {
  if (end - t == NT) return tile(std::integral_constant<int, NT>(), t);
  if constexpr (NT > 1) remainder_tile<NT - 1>(t, end, tile);
}

template <int NT, class Tile>
HWY_INLINE void for_token_tiles(std::int64_t begin, std::int64_t end, const Tile& tile) {
  std::int64_t t = begin;
  for (; t + NT <= end; t += NT) tile(std::integral_constant<int, NT>(), t);
  if constexpr (NT > 1) {
    if (t < end) remainder_tile<NT - 1>(t, end, tile);
  }
}

// ---- GEMV ----

// Every GEMV kernel prefetches the bytes of a later row tile in step with the bytes it reads:
// the hardware prefetcher stops at page boundaries, and a GEMV has little else to overlap a
// miss with. On Zen 4 this made the decode matmuls from DRAM about 1.5x faster (Q4_1) and 2x
// (Q8_0); docs/results.md has the numbers.

// y[t][r0 + j] for j < R rows and t < N tokens; every row block is decoded once for all tokens.
template <TensorType T, int N, int R>
HWY_INLINE void gemv_tile(const WeightView& w, const float* x, float* y, std::int64_t r0) {
  constexpr std::size_t kBytesPerBlock = info(T).block_bytes;
  constexpr std::size_t kElements = info(T).block_elements;
  const DF df;
  const std::size_t stride = row_bytes(T, w.cols);
  const std::uint8_t* base = row_at(w, r0);
  VF acc[R][N];
  for (auto& row : acc)
    for (VF& a : row) a = hn::Zero(df);
  for (std::int64_t k = 0; k < w.cols; k += kBlock) {
    for (int j = 0; j < R; ++j) {
      hwy::Prefetch(base + std::size_t(j + R) * stride +
                    std::size_t(k) * kBytesPerBlock / kElements);
      VF wv[kBlockVecs];
      decode_chunk<T>(base + std::size_t(j) * stride, k, wv);
      for (int t = 0; t < N; ++t) {
        const float* xt = x + t * w.cols + k;
        for (int i = 0; i < kBlockVecs; ++i) {
          acc[j][t] = hn::MulAdd(wv[i], hn::LoadU(df, xt + i * kLanes), acc[j][t]);
        }
      }
    }
  }
  for (int j = 0; j < R; ++j) {
    for (int t = 0; t < N; ++t) y[t * w.rows + r0 + j] = hn::GetLane(hn::SumOfLanes(df, acc[j][t]));
  }
}

// Calls tile(N, R, t, r) (N and R as std::integral_constant) for tokens [0, n) in groups of
// N <= 4 starting at t, each group one pass over rows [begin, end) in tiles of R starting at r:
// several rows at once keep independent chains in flight and share activation loads.
template <class Tile>
HWY_INLINE void gemv_tiles(std::int64_t n, std::int64_t begin, std::int64_t end, const Tile& tile) {
  const auto rows = [&](auto nt, std::int64_t t) {
    constexpr int R = decltype(nt)::value <= 2 ? 4 : 2;
    std::int64_t r = begin;
    for (; r + R <= end; r += R) tile(nt, std::integral_constant<int, R>(), t, r);
    for (; r < end; ++r) tile(nt, std::integral_constant<int, 1>(), t, r);
  };
  for (std::int64_t t = 0; t < n; t += 4) {
    switch (std::min<std::int64_t>(n - t, 4)) {
      case 1:
        rows(std::integral_constant<int, 1>(), t);
        break;
      case 2:
        rows(std::integral_constant<int, 2>(), t);
        break;
      case 3:
        rows(std::integral_constant<int, 3>(), t);
        break;
      default:
        rows(std::integral_constant<int, 4>(), t);
        break;
    }
  }
}

float dot(const float* a, const float* b, std::int64_t count) {
  const DF df;
  VF acc = hn::Zero(df);
  std::int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    acc = hn::MulAdd(hn::LoadU(df, a + i), hn::LoadU(df, b + i), acc);
  }
  float sum = hn::GetLane(hn::SumOfLanes(df, acc));
  for (; i < count; ++i) sum += a[i] * b[i];
  return sum;
}

// Float rows of a length not a multiple of 32: each row decoded, then dotted.
void gemv_reference(const WeightView& w, const float* x, std::int64_t n, float* y,
                    std::int64_t begin, std::int64_t end) {
  std::vector<float> row(std::size_t(w.cols));
  for (std::int64_t r = begin; r < end; ++r) {
    decode_row(w, r, row.data());
    for (std::int64_t t = 0; t < n; ++t)
      y[t * w.rows + r] = dot(row.data(), x + t * w.cols, w.cols);
  }
}

void GemvRows(const WeightView& w, const float* x, std::int64_t n, float* y, std::int64_t row_begin,
              std::int64_t row_end) {
  if (!decodes_in_registers(w)) return gemv_reference(w, x, n, y, row_begin, row_end);
  with_type(w.type, [&](auto type) {
    gemv_tiles(n, row_begin, row_end, [&](auto nt, auto rt, std::int64_t t, std::int64_t r) {
      gemv_tile<decltype(type)::value, decltype(nt)::value, decltype(rt)::value>(w, x + t * w.cols,
                                                                                 y + t * w.rows, r);
    });
  });
}

// ---- activations for the integer path ----

template <class Q>
void quantize_as(const float* x, std::int64_t token_begin, std::int64_t token_end, Q* codes,
                 QuantizedActivations& out) {
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<Q, DF> dq;
  constexpr float kMax = float(std::numeric_limits<Q>::max());
  const std::int64_t cols = out.cols;
  const std::int64_t blocks = cols / kBlock;
  for (std::int64_t t = token_begin; t < token_end; ++t) {
    for (std::int64_t b = 0; b < blocks; ++b) {
      const float* xb = x + t * cols + b * kBlock;
      VF v[kBlockVecs];
      VF amax = hn::Zero(df);
      for (int i = 0; i < kBlockVecs; ++i) {
        v[i] = hn::LoadU(df, xb + i * kLanes);
        amax = hn::Max(amax, hn::Abs(v[i]));
      }
      const float a = hn::GetLane(hn::MaxOfLanes(df, amax));
      const VF inv = hn::Set(df, a > 0.0f ? kMax / a : 0.0f);
      Q* q = codes + t * cols + b * kBlock;
      auto sum = hn::Zero(di);
      for (int i = 0; i < kBlockVecs; ++i) {
        const auto qi = hn::NearestInt(hn::Mul(v[i], inv));
        sum = hn::Add(sum, qi);
        hn::StoreU(hn::DemoteTo(dq, qi), dq, q + i * kLanes);
      }
      const float d = a / kMax;
      out.d[std::size_t(t * blocks + b)] = d;
      out.s[std::size_t(t * blocks + b)] = d * float(hn::GetLane(hn::SumOfLanes(di, sum)));
    }
  }
}

void QuantizeActivations(const float* x, std::int64_t token_begin, std::int64_t token_end,
                         QuantizedActivations& out) {
  if (out.bits == 8) return quantize_as(x, token_begin, token_end, out.q8.data(), out);
  quantize_as(x, token_begin, token_end, out.q16.data(), out);
}

// Stores the first `valid` (of kLanes) lanes of v to out.
HWY_INLINE void store_rows(VF v, std::int64_t valid, float* out) {
  const DF df;
  if (valid >= kLanes) return hn::StoreU(v, df, out);
  if (valid <= 0) return;
  HWY_ALIGN float lanes[kLanes];
  hn::Store(v, df, lanes);
  std::copy_n(lanes, valid, out);
}

// ---- float GEMM ----

constexpr int kF32PanelRows = 2 * kLanes;
constexpr int kF32TileTokens = 6;

// Rows [r0, r0 + kF32PanelRows) decoded into panel[k][kF32PanelRows]; rows at or past `end`
// are zeros. The rows are decoded whole into `rows` [kF32PanelRows][cols], then transposed a
// few columns at a time, so the strided panel writes stay within L1.
void pack_f32_panel(const WeightView& w, std::int64_t r0, std::int64_t end, float* rows,
                    float* panel) {
  const std::int64_t cols = w.cols;
  for (std::int64_t j = 0; j < kF32PanelRows; ++j) {
    if (r0 + j < end) {
      decode_row(w, r0 + j, rows + j * cols);
    } else {
      std::fill_n(rows + j * cols, cols, 0.0f);
    }
  }
  constexpr std::int64_t kColumns = 16;
  for (std::int64_t k0 = 0; k0 < cols; k0 += kColumns) {
    const std::int64_t k1 = std::min(cols, k0 + kColumns);
    for (std::int64_t j = 0; j < kF32PanelRows; ++j) {
      for (std::int64_t k = k0; k < k1; ++k) panel[k * kF32PanelRows + j] = rows[j * cols + k];
    }
  }
}

template <int NT>
HWY_INLINE void f32_tile(const float* panel, const float* x, std::int64_t cols, float* y,
                         std::int64_t y_stride, std::int64_t valid_rows) {
  const DF df;
  VF acc[2][NT];
  for (auto& half : acc)
    for (VF& a : half) a = hn::Zero(df);
  for (std::int64_t k = 0; k < cols; ++k) {
    const VF w0 = hn::Load(df, panel + k * kF32PanelRows);
    const VF w1 = hn::Load(df, panel + k * kF32PanelRows + kLanes);
    for (int t = 0; t < NT; ++t) {
      const VF xv = hn::Set(df, x[t * cols + k]);
      acc[0][t] = hn::MulAdd(w0, xv, acc[0][t]);
      acc[1][t] = hn::MulAdd(w1, xv, acc[1][t]);
    }
  }
  for (int t = 0; t < NT; ++t) {
    store_rows(acc[0][t], valid_rows, y + t * y_stride);
    store_rows(acc[1][t], valid_rows - kLanes, y + t * y_stride + kLanes);
  }
}

void f32_gemm(const GemmTask& task, const GemmScratch& scratch) {
  const WeightView& w = *task.w;
  auto* panel = reinterpret_cast<float*>(scratch.data());
  float* rows = panel + std::size_t(w.cols) * kF32PanelRows;
  for (std::int64_t r0 = task.row_begin; r0 < task.row_end; r0 += kF32PanelRows) {
    pack_f32_panel(w, r0, task.row_end, rows, panel);
    const std::int64_t valid = std::min<std::int64_t>(kF32PanelRows, task.row_end - r0);
    for_token_tiles<kF32TileTokens>(task.token_begin, task.token_end, [&](auto nt, std::int64_t t) {
      f32_tile<decltype(nt)::value>(panel, task.x + t * w.cols, w.cols, task.y + t * w.rows + r0,
                                    w.rows, valid);
    });
  }
}

// ---- integer GEMM (AVX-512 VNNI) ----

#if HWY_TARGET == HWY_AVX3_DL

// Highway 1.0.3's AVX3_DL attributes name avxvnni (VEX) rather than avx512vnni, which the
// 512-bit vpdpbusd and vpdpwssd need; its CPU check for AVX3_DL does require AVX-512 VNNI.
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512vnni")

using DI = hn::Full512<std::int32_t>;
using VI = hn::Vec<DI>;
constexpr int kPanelRows = 16;   // int32 lanes of a vector
constexpr int kGroupBytes = 64;  // one group: a 32-bit lane of codes for each of 16 rows
constexpr int kIntTileTokens = 4;

// Activations of E elements per 32-bit lane: E = 4 for 8-bit activations (vpdpbusd: unsigned
// 8-bit codes times signed 8-bit activations), E = 2 for 16-bit ones (vpdpwssd: codes widened
// to 16 bits).
template <int E>
constexpr int kBlockCodeBytes = kBlock / E* kGroupBytes;  // one block of a panel

template <int E>
HWY_INLINE VI dot_lanes(VI acc, VI codes, VI x) {
  if constexpr (E == 4) return VI{_mm512_dpbusd_epi32(acc.raw, codes.raw, x.raw)};
  return VI{_mm512_dpwssd_epi32(acc.raw, codes.raw, x.raw)};
}

// Two panels of 16 rows: codes [panel][block][group][row][lane bytes], scales and offsets
// [panel][block][row].
struct IntPanels {
  std::uint8_t* codes;
  float* d;
  float* m;
  std::int64_t blocks;
};

// The codes of two panels; their scales and offsets follow.
template <int E>
std::size_t int_code_bytes(std::int64_t blocks) {
  return std::size_t(2 * blocks * kBlockCodeBytes<E>);
}

// Packing reads the same 4 bytes of 16 rows with one gather, so each gather yields the codes
// of one 64-byte group (two for 16-bit activations). Rows past the matrix are masked off and
// pack as zeros.
struct PanelRows {
  const std::uint8_t* base;  // the first row
  std::int32_t stride;       // bytes from row to row
  __m512i offsets;           // byte offset of each row from base
  __mmask16 valid;

  VI dwords(std::size_t at) const {
    return VI{_mm512_mask_i32gather_epi32(_mm512_setzero_si512(), valid, offsets, base + at, 1)};
  }
};

// Codes c..c+3 of each row (one byte each in `four`) into block `codes`: as they are for 8-bit
// activations, as two groups of 16-bit pairs for 16-bit ones.
template <int E>
HWY_INLINE void store_codes(VI four, int c, std::uint8_t* codes) {
  const DI di;
  if constexpr (E == 4) {
    hn::Store(four, di, reinterpret_cast<std::int32_t*>(codes + c / 4 * kGroupBytes));
  } else {
    const VI byte0 = hn::Set(di, 0xFF);
    const VI byte2 = hn::Set(di, 0xFF0000);
    const VI low = hn::Or(hn::And(four, byte0), hn::And(hn::ShiftLeft<8>(four), byte2));
    const VI high =
        hn::Or(hn::And(hn::ShiftRight<16>(four), byte0), hn::And(hn::ShiftRight<8>(four), byte2));
    hn::Store(low, di, reinterpret_cast<std::int32_t*>(codes + c / 2 * kGroupBytes));
    hn::Store(high, di, reinterpret_cast<std::int32_t*>(codes + (c / 2 + 1) * kGroupBytes));
  }
}

// The fp16 values in the low halves of the lanes, as floats.
HWY_INLINE VF low_halves(VI v) {
  return VF{_mm512_cvtph_ps(_mm512_cvtepi32_epi16(v.raw))};
}

// The 32 codes of a Q4_0/Q4_1 block from its 16 bytes at `at`: byte j holds element j in its
// low nibble and element j + 16 in its high one.
template <int E>
HWY_INLINE void pack_nibbles(const PanelRows& rows, std::size_t at, std::uint8_t* codes) {
  const DI di;
  const VI low4 = hn::Set(di, 0x0F0F0F0F);
  for (int c = 0; c < 16; c += 4) {
    const VI bytes = rows.dwords(at + std::size_t(c));
    store_codes<E>(hn::And(bytes, low4), c, codes);
    store_codes<E>(hn::And(hn::ShiftRight<4>(bytes), low4), c + 16, codes);
  }
}

// Block b of 16 rows as codes with scale d and offset m per row (w = d·c + m).
template <int E>
HWY_INLINE void pack_block(TensorType type, const PanelRows& rows, std::int64_t b,
                           std::uint8_t* codes, float* d, float* m) {
  const DI di;
  const DF df;
  if (type == TensorType::q8_0) {  // c = q + 128, m = -128 d
    const std::size_t at = std::size_t(b) * 34;
    const VF scale = low_halves(rows.dwords(at));
    hn::Store(scale, df, d);
    hn::Store(hn::Mul(scale, hn::Set(df, -128.0f)), df, m);
    for (int c = 0; c < kBlock; c += 4) {
      const VI q = rows.dwords(at + 2 + std::size_t(c));
      store_codes<E>(hn::Xor(q, hn::Set(di, std::int32_t(0x80808080u))), c, codes);
    }
  } else if (type == TensorType::q4_1) {
    const std::size_t at = std::size_t(b) * 20;
    const VI dm = rows.dwords(at);
    hn::Store(low_halves(dm), df, d);
    hn::Store(low_halves(hn::ShiftRight<16>(dm)), df, m);
    pack_nibbles<E>(rows, at + 4, codes);
  } else {  // q4_0: m = -8 d
    const std::size_t at = std::size_t(b) * 18;
    const VF scale = low_halves(rows.dwords(at));
    hn::Store(scale, df, d);
    hn::Store(hn::Mul(scale, hn::Set(df, -8.0f)), df, m);
    pack_nibbles<E>(rows, at + 2, codes);
  }
}

// Super-block s of Q4_K: 8 sub-blocks of 32, each with its own 6-bit scale and min; sub-blocks
// 2j and 2j + 1 share 32 bytes (low and high nibbles).
template <int E>
HWY_INLINE void pack_q4_k(const PanelRows& rows, std::int64_t s, std::int64_t valid,
                          std::uint8_t* codes, float* d, float* m) {
  const DI di;
  const VI low4 = hn::Set(di, 0x0F0F0F0F);
  const std::size_t at = std::size_t(s) * 144;
  for (int j = 0; j < 4; ++j) {
    std::uint8_t* even = codes + 2 * j * kBlockCodeBytes<E>;
    for (int c = 0; c < kBlock; c += 4) {
      const VI bytes = rows.dwords(at + 16 + 32 * std::size_t(j) + std::size_t(c));
      store_codes<E>(hn::And(bytes, low4), c, even);
      store_codes<E>(hn::And(hn::ShiftRight<4>(bytes), low4), c, even + kBlockCodeBytes<E>);
    }
  }
  for (std::int64_t lane = 0; lane < valid; ++lane) {
    const std::uint8_t* p = rows.base + lane * rows.stride + at;
    const float scale = half_at(p);
    const float min_scale = half_at(p + 2);
    for (int j = 0; j < 8; ++j) {
      const auto [sc, mn] = q4_k_scale_min(p + 4, j);
      d[j * kPanelRows + lane] = scale * float(sc);
      m[j * kPanelRows + lane] = -min_scale * float(mn);
    }
  }
}

// Rows [r0, r0 + 16) of w into one panel: codes [block][group][row][lane bytes], d and m
// [block][row].
template <int E>
void pack_int_panel(const WeightView& w, std::int64_t r0, std::int64_t end, std::uint8_t* codes,
                    float* d, float* m) {
  const std::int64_t blocks = w.cols / kBlock;
  const std::int64_t valid = std::clamp<std::int64_t>(end - r0, 0, kPanelRows);
  if (valid < kPanelRows) {  // padding rows weigh nothing
    std::fill_n(d, blocks * kPanelRows, 0.0f);
    std::fill_n(m, blocks * kPanelRows, 0.0f);
    if (valid == 0) {
      std::fill_n(codes, blocks * kBlockCodeBytes<E>, std::uint8_t(0));
      return;
    }
  }
  const DI di;
  const auto stride = std::int32_t(row_bytes(w.type, w.cols));
  const PanelRows rows{row_at(w, r0), stride, hn::Mul(hn::Iota(di, 0), hn::Set(di, stride)).raw,
                       __mmask16((1u << valid) - 1)};
  if (w.type == TensorType::q4_k) {
    for (std::int64_t s = 0; s < blocks / 8; ++s) {
      pack_q4_k<E>(rows, s, valid, codes + s * 8 * kBlockCodeBytes<E>, d + s * 8 * kPanelRows,
                   m + s * 8 * kPanelRows);
    }
    return;
  }
  for (std::int64_t b = 0; b < blocks; ++b) {
    pack_block<E>(w.type, rows, b, codes + b * kBlockCodeBytes<E>, d + b * kPanelRows,
                  m + b * kPanelRows);
  }
}

// y[t][0, 32) for t < NT tokens from the two panels; x holds the quantized activations of the
// first of them (int8 or int16 codes, E to a 32-bit lane).
template <int E, int NT, class Q>
HWY_INLINE void int_tile(const IntPanels& p, const Q* x, const QuantizedActivations& xq,
                         std::int64_t t0, float* y, std::int64_t y_stride,
                         std::int64_t valid_rows) {
  const DI di;
  const DF df;
  const std::int64_t cols = xq.cols;
  const float* dx = xq.d.data() + t0 * p.blocks;
  const float* sx = xq.s.data() + t0 * p.blocks;
  const std::uint8_t* codes1 = p.codes + p.blocks * kBlockCodeBytes<E>;
  VF acc[2][NT];
  for (auto& panel : acc)
    for (VF& a : panel) a = hn::Zero(df);
  for (std::int64_t b = 0; b < p.blocks; ++b) {
    VI sum[2][NT];
    for (auto& panel : sum)
      for (VI& s : panel) s = hn::Zero(di);
    const std::uint8_t* c0 = p.codes + b * kBlockCodeBytes<E>;
    const std::uint8_t* c1 = codes1 + b * kBlockCodeBytes<E>;
    for (int g = 0; g < kBlock / E; ++g) {
      const VI w0 = hn::Load(di, reinterpret_cast<const std::int32_t*>(c0 + g * kGroupBytes));
      const VI w1 = hn::Load(di, reinterpret_cast<const std::int32_t*>(c1 + g * kGroupBytes));
      for (int t = 0; t < NT; ++t) {
        std::int32_t lane;  // E activations of token t
        std::memcpy(&lane, x + t * cols + b * kBlock + g * E, sizeof lane);
        const VI xv = hn::Set(di, lane);
        sum[0][t] = dot_lanes<E>(sum[0][t], w0, xv);
        sum[1][t] = dot_lanes<E>(sum[1][t], w1, xv);
      }
    }
    for (int panel = 0; panel < 2; ++panel) {
      const std::int64_t at = (panel * p.blocks + b) * kPanelRows;
      const VF d = hn::Load(df, p.d + at);
      const VF m = hn::Load(df, p.m + at);
      for (int t = 0; t < NT; ++t) {
        const VF scaled =
            hn::Mul(hn::ConvertTo(df, sum[panel][t]), hn::Set(df, dx[t * p.blocks + b]));
        acc[panel][t] = hn::MulAdd(scaled, d, acc[panel][t]);
        acc[panel][t] = hn::MulAdd(m, hn::Set(df, sx[t * p.blocks + b]), acc[panel][t]);
      }
    }
  }
  for (int t = 0; t < NT; ++t) {
    store_rows(acc[0][t], valid_rows, y + t * y_stride);
    store_rows(acc[1][t], valid_rows - kPanelRows, y + t * y_stride + kPanelRows);
  }
}

template <int E, class Q>
void int_gemm(const GemmTask& task, const Q* x, const GemmScratch& scratch) {
  const WeightView& w = *task.w;
  const std::int64_t blocks = w.cols / kBlock;
  std::uint8_t* bytes = scratch.data();
  auto* scales = reinterpret_cast<float*>(bytes + int_code_bytes<E>(blocks));
  const IntPanels p{bytes, scales, scales + 2 * blocks * kPanelRows, blocks};
  for (std::int64_t r0 = task.row_begin; r0 < task.row_end; r0 += 2 * kPanelRows) {
    for (int panel = 0; panel < 2; ++panel) {
      pack_int_panel<E>(w, r0 + panel * kPanelRows, task.row_end,
                        p.codes + panel * blocks * kBlockCodeBytes<E>,
                        p.d + panel * blocks * kPanelRows, p.m + panel * blocks * kPanelRows);
    }
    const std::int64_t valid = std::min<std::int64_t>(2 * kPanelRows, task.row_end - r0);
    for_token_tiles<kIntTileTokens>(task.token_begin, task.token_end, [&](auto nt, std::int64_t t) {
      int_tile<E, decltype(nt)::value>(p, x + t * w.cols, *task.xq, t, task.y + t * w.rows + r0,
                                       w.rows, valid);
    });
  }
}

// ---- integer GEMV (AVX-512 VNNI) ----
//
// A decode matmul reads each weight row once, so it wants the fewest operations per weight, and
// reads rows in place (no panel).
//
// Q4_0 and Q4_1, 8- or 16-bit activations: a row group. The 16 code bytes of one block of 4 rows
// fill one vector (128-bit lane i: row i), so one vpdpbusd against the block's activations
// broadcast to every lane dots 4 rows at once, and the scale step (convert, multiply by
// d·dx, add) is shared by the 4 rows. 16-bit activations are split into a signed high byte and
// an unsigned low byte (q = 256·h + l, split_byte_planes), each dotted by its own vpdpbusd.
// Scales come by broadcast loads, not gathers: Zen 4 runs a gather as microcode, which stalls
// the front end.
//
// Q8_0, 16-bit activations: a block's codes widened to 16 bits fill one vector, dotted by one
// vpdpwssd. (The 512-bit forms keep GCC from the VEX encoding of 256-bit vpdpwssd, AVX-VNNI,
// which AVX-512 VNNI CPUs such as Zen 4 lack.)

constexpr int kGroupRows = 4;   // rows of one vector of code bytes
constexpr int kGemvGroups = 2;  // groups of a tile

// The 4 bytes at rows[i] + at in 128-bit lane i, for each row i of the group.
HWY_INLINE __m512i group_dwords(const std::uint8_t* const (&rows)[kGroupRows], std::size_t at) {
  const auto dword = [&](int i) {
    std::int32_t v;
    std::memcpy(&v, rows[i] + at, sizeof v);
    return v;
  };
  __m512i v = _mm512_set1_epi32(dword(0));
  v = _mm512_mask_set1_epi32(v, 0x00F0, dword(1));
  v = _mm512_mask_set1_epi32(v, 0x0F00, dword(2));
  return _mm512_mask_set1_epi32(v, 0xF000, dword(3));
}

// The code bytes of one block of 4 rows (row i at rows[i] + at) as two vectors of codes:
// elements 0-15 of each row (low nibbles) and 16-31 (high nibbles).
HWY_INLINE void group_codes(const std::uint8_t* const (&rows)[kGroupRows], std::size_t at,
                            __m512i& low, __m512i& high) {
  const auto load = [&](int i) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[i] + at));
  };
  __m512i bytes = _mm512_castsi128_si512(load(0));
  bytes = _mm512_inserti32x4(bytes, load(1), 1);
  bytes = _mm512_inserti32x4(bytes, load(2), 2);
  bytes = _mm512_inserti32x4(bytes, load(3), 3);
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  low = _mm512_and_si512(bytes, nibble);
  high = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), nibble);
}

HWY_INLINE __m512i broadcast16(const void* p) {
  return _mm512_broadcast_i32x4(_mm_loadu_si128(static_cast<const __m128i*>(p)));
}

// Σ code·q over the block for each lane (4 rows × 4 lanes of partial sums), with the block's
// activations at x: 8-bit codes, or (16 bits) the byte planes, high bytes then low bytes.
template <int Bits>
HWY_INLINE __m512i group_dot(__m512i low, __m512i high, const std::uint8_t* x) {
  if constexpr (Bits == 8) {
    const __m512i sum = _mm512_dpbusd_epi32(_mm512_setzero_si512(), low, broadcast16(x));
    return _mm512_dpbusd_epi32(sum, high, broadcast16(x + 16));
  } else {
    // The low bytes are the unsigned operand and the codes (0-15) the signed one.
    __m512i h = _mm512_dpbusd_epi32(_mm512_setzero_si512(), low, broadcast16(x));
    h = _mm512_dpbusd_epi32(h, high, broadcast16(x + 16));
    __m512i l = _mm512_dpbusd_epi32(_mm512_setzero_si512(), broadcast16(x + 32), low);
    l = _mm512_dpbusd_epi32(l, broadcast16(x + 48), high);
    return _mm512_add_epi32(_mm512_slli_epi32(h, 8), l);
  }
}

// y[t][r0 + i] for i < 4G rows (rows past `end` repeat the last one and are not stored) and
// t < N tokens; G groups of 4 rows share the activation loads and keep G chains of adds in
// flight. A block adds d·dx·Σ c·q + m·s (q4_0: m = -8d) with s = dx·Σ q.
// Not inlined: it carries the avx512vnni attribute its callers outside this section lack.
template <TensorType T, int Bits, int N, int G>
void group_gemv_tile(const WeightView& w, const QuantizedActivations& xq, float* y, std::int64_t r0,
                     std::int64_t end) {
  constexpr std::size_t kBlockBytes = info(T).block_bytes;
  constexpr std::size_t kCodesAt = T == TensorType::q4_1 ? 4 : 2;
  constexpr std::size_t kTileBlockBytes = G * kGroupRows * kBlockBytes;
  const std::int64_t blocks = w.cols / kBlock;
  const std::uint8_t* rows[G][kGroupRows];
  for (int g = 0; g < G; ++g) {
    for (int i = 0; i < kGroupRows; ++i) {
      rows[g][i] = row_at(w, std::min(r0 + g * kGroupRows + i, end - 1));
    }
  }
  // The next tile's rows follow this one's, a tile's worth of bytes a block.
  const std::uint8_t* next_tile = rows[0][0] + G * kGroupRows * row_bytes(T, w.cols);
  const std::uint8_t* x =
      Bits == 8 ? reinterpret_cast<const std::uint8_t*>(xq.q8.data()) : xq.byte_planes.data();
  // The fp16 scales (even words) to the low half, the offsets (odd words) to the high half.
  const __m512i scales_then_offsets =
      _mm512_set_epi16(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1, 30, 28, 26, 24,
                       22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  __m512 acc[G][N];
  for (auto& group : acc)
    for (__m512& a : group) a = _mm512_setzero_ps();
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::size_t at = std::size_t(b) * kBlockBytes;
    for (std::size_t line = 0; line < kTileBlockBytes; line += 64) {
      hwy::Prefetch(next_tile + std::size_t(b) * kTileBlockBytes + line);
    }
    for (int g = 0; g < G; ++g) {
      const __m512i halves =
          _mm512_permutexvar_epi16(scales_then_offsets, group_dwords(rows[g], at));
      const __m512 d = _mm512_cvtph_ps(_mm512_castsi512_si256(halves));
      const __m512 m = T == TensorType::q4_1 ? _mm512_cvtph_ps(_mm512_extracti64x4_epi64(halves, 1))
                                             : _mm512_mul_ps(d, _mm512_set1_ps(-8.0f));
      __m512i low, high;
      group_codes(rows[g], at + kCodesAt, low, high);
      for (int t = 0; t < N; ++t) {
        const std::int64_t tb = t * blocks + b;
        const __m512 dot =
            _mm512_cvtepi32_ps(group_dot<Bits>(low, high, x + tb * kBlock * (Bits / 8)));
        // Each of a row's 4 lanes adds a quarter of the offset term.
        const __m512 offset = _mm512_mul_ps(m, _mm512_set1_ps(xq.s[std::size_t(tb)] / 4.0f));
        acc[g][t] = _mm512_add_ps(
            acc[g][t],
            _mm512_fmadd_ps(dot, _mm512_mul_ps(d, _mm512_set1_ps(xq.d[std::size_t(tb)])), offset));
      }
    }
  }
  // Lane L is row L / 4: transpose, then add the four 128-bit lanes.
  const __m512i transpose = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  for (int g = 0; g < G; ++g) {
    const std::int64_t first = r0 + g * kGroupRows;
    if (first >= end) break;
    const auto valid = __mmask8((1u << std::min<std::int64_t>(kGroupRows, end - first)) - 1);
    for (int t = 0; t < N; ++t) {
      __m512 sum = _mm512_permutexvar_ps(transpose, acc[g][t]);
      sum = _mm512_add_ps(sum, _mm512_shuffle_f32x4(sum, sum, _MM_SHUFFLE(1, 0, 3, 2)));
      sum = _mm512_add_ps(sum, _mm512_shuffle_f32x4(sum, sum, _MM_SHUFFLE(2, 3, 0, 1)));
      _mm_mask_storeu_ps(y + t * w.rows + first, valid, _mm512_castps512_ps128(sum));
    }
  }
}

// The 32 codes of a Q8_0 block at p as 16-bit lanes, in element order.
HWY_INLINE __m512i widen_q8_0(const std::uint8_t* p) {
  return _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2)));
}

// How many row tiles ahead the Q8_0 GEMV prefetches, into L2. This kernel decodes faster than
// DRAM delivers, so it waits on latency. Prefetching one tile ahead into L1 ran out of L1 miss
// buffers; four tiles ahead into L2 about halved the time of SmolLM2's output matrix read from
// DRAM (docs/journal.md). The Q4 kernels decode at half that rate and gain nothing from it.
constexpr int kQ8PrefetchTiles = 4;

// y[t][r0 + j] for j < R rows and t < N tokens of Q8_0 weights, 16-bit activations: a block
// adds d·dx·Σ c·q.
template <int N, int R>
void q8_0_gemv_tile(const WeightView& w, const QuantizedActivations& xq, std::int64_t t0, float* y,
                    std::int64_t r0) {
  constexpr std::size_t kBlockBytes = info(TensorType::q8_0).block_bytes;
  const std::int64_t blocks = w.cols / kBlock;
  const std::size_t stride = row_bytes(TensorType::q8_0, w.cols);
  const std::uint8_t* base = row_at(w, r0);
  const std::int16_t* x = xq.q16.data() + t0 * w.cols;
  const float* dx = xq.d.data() + t0 * blocks;
  __m512 acc[R][N];
  for (auto& row : acc)
    for (__m512& a : row) a = _mm512_setzero_ps();
  for (std::int64_t b = 0; b < blocks; ++b) {
    for (int j = 0; j < R; ++j) {
      const std::uint8_t* p = base + std::size_t(j) * stride + std::size_t(b) * kBlockBytes;
      _mm_prefetch(reinterpret_cast<const char*>(p + kQ8PrefetchTiles * R * stride), _MM_HINT_T1);
      const __m512i codes = widen_q8_0(p);
      const float d = half_at(p);
      for (int t = 0; t < N; ++t) {
        const __m512i xb = _mm512_loadu_si512(x + t * w.cols + b * kBlock);
        const __m512i sum = _mm512_dpwssd_epi32(_mm512_setzero_si512(), codes, xb);
        acc[j][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_set1_ps(d * dx[t * blocks + b]),
                                    acc[j][t]);
      }
    }
  }
  for (int j = 0; j < R; ++j) {
    for (int t = 0; t < N; ++t) y[t * w.rows + r0 + j] = _mm512_reduce_add_ps(acc[j][t]);
  }
}

// Rows [begin, end) of a Q4_0/Q4_1 matrix in row groups, all n (<= 4) tokens at once.
template <TensorType T, int Bits>
void group_gemv_rows(const WeightView& w, const QuantizedActivations& xq, std::int64_t n, float* y,
                     std::int64_t begin, std::int64_t end) {
  const auto tiles = [&](auto nt, std::int64_t) {
    for (std::int64_t r = begin; r < end; r += kGemvGroups * kGroupRows) {
      group_gemv_tile<T, Bits, decltype(nt)::value, kGemvGroups>(w, xq, y, r, end);
    }
  };
  remainder_tile<int(kGemvMaxTokens)>(0, n, tiles);
}

HWY_POP_ATTRIBUTES

#endif  // HWY_TARGET == HWY_AVX3_DL

// ---- integer GEMV below AVX-512 (AVX2, SSE4, NEON): 16-bit pairs ----
//
// Codes widened to 16 bits against 16-bit activations (8-bit ones widened as they load),
// ReorderWidenMulAccumulate (vpmaddwd, NEON's smlal) summing two products into each int32 lane:
// half the operations a weight of the float GEMV's convert-and-FMA, with the activations the
// GEMM's int16 or int8 rounding. The file's layout, rows side by side as gemv_tile reads them.
// A 32-element block is whole int16 vectors on these targets (8 or 16 lanes); AVX-512, with 32,
// has the VNNI kernels above.

#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_AVX3 && HWY_TARGET != HWY_AVX3_DL
constexpr bool kPairGemv = true;
using DI16 = hn::Repartition<std::int16_t, hn::RebindToSigned<DF>>;
constexpr int kPairLanes = int(hn::MaxLanes(DI16()));
constexpr int kPairVecs = int(kBlock) / kPairLanes;  // int16 vectors a block

// The codes of a block at p (its first byte past the scale and offset) as int16 vectors in
// element order. Q4: byte j holds element j in its low nibble and j + 16 in its high one.
template <TensorType T>
HWY_INLINE void pair_codes(const std::uint8_t* codes, hn::Vec<DI16> (&out)[kPairVecs]) {
  const DI16 d16;
  const hn::RebindToUnsigned<DI16> du16;
  if constexpr (T == TensorType::q8_0) {
    const hn::Rebind<std::int8_t, DI16> d8;
    for (int v = 0; v < kPairVecs; ++v) {
      out[v] = hn::PromoteTo(
          d16, hn::LoadU(d8, reinterpret_cast<const std::int8_t*>(codes) + v * kPairLanes));
    }
  } else {
    const hn::Rebind<std::uint8_t, DI16> d8;
    constexpr int per_half = kPairVecs / 2;  // vectors of low nibbles, then of high ones
    for (int v = 0; v < per_half; ++v) {
      const auto bytes = hn::PromoteTo(du16, hn::LoadU(d8, codes + v * kPairLanes));
      out[v] = hn::BitCast(d16, hn::And(bytes, hn::Set(du16, 0x0F)));
      out[v + per_half] = hn::BitCast(d16, hn::ShiftRight<4>(bytes));
    }
  }
}

// y[t][r0 + j] for j < R rows and t < N tokens; a block adds d·dx·Σ c·q + m·s (q4_0: m = -8d,
// q8_0: no offset) with s = dx·Σ q (quantize_activations), q of `Bits` bits.
template <TensorType T, int Bits, int N, int R>
HWY_INLINE void pair_gemv_tile(const WeightView& w, const QuantizedActivations& xq, std::int64_t t0,
                               float* y, std::int64_t r0) {
  constexpr std::size_t kBlockBytes = info(T).block_bytes;
  constexpr std::size_t kCodesAt = T == TensorType::q4_1 ? 4 : 2;
  const DF df;
  const hn::RebindToSigned<DF> di;
  const DI16 d16;
  const std::int64_t blocks = w.cols / kBlock;
  const std::size_t stride = row_bytes(T, w.cols);
  const std::uint8_t* base = row_at(w, r0);
  const auto activations = [&](std::int64_t at) {
    if constexpr (Bits == 8) {
      const hn::Rebind<std::int8_t, DI16> d8;
      return hn::PromoteTo(d16, hn::LoadU(d8, xq.q8.data() + t0 * w.cols + at));
    } else {
      return hn::LoadU(d16, xq.q16.data() + t0 * w.cols + at);
    }
  };
  const float* dx = xq.d.data() + t0 * blocks;
  const float* sx = xq.s.data() + t0 * blocks;
  VF acc[R][N];
  float offset[R][N] = {};
  for (auto& row : acc)
    for (VF& a : row) a = hn::Zero(df);
  for (std::int64_t b = 0; b < blocks; ++b) {
    for (int j = 0; j < R; ++j) {
      const std::uint8_t* p = base + std::size_t(j) * stride + std::size_t(b) * kBlockBytes;
      hwy::Prefetch(p + std::size_t(R) * stride);
      hn::Vec<DI16> codes[kPairVecs];
      pair_codes<T>(p + kCodesAt, codes);
      const float d = half_at(p);
      for (int t = 0; t < N; ++t) {
        const std::int64_t xb = t * w.cols + b * kBlock;
        auto sum = hn::Zero(di), odd = hn::Zero(di);
        for (int v = 0; v < kPairVecs; ++v) {
          sum = hn::ReorderWidenMulAccumulate(di, codes[v], activations(xb + v * kPairLanes), sum,
                                              odd);
        }
        const float scale = d * dx[t * blocks + b];
        acc[j][t] = hn::MulAdd(hn::ConvertTo(df, hn::RearrangeToOddPlusEven(sum, odd)),
                               hn::Set(df, scale), acc[j][t]);
        if constexpr (T == TensorType::q4_1) offset[j][t] += half_at(p + 2) * sx[t * blocks + b];
        if constexpr (T == TensorType::q4_0) offset[j][t] += -8.0f * d * sx[t * blocks + b];
      }
    }
  }
  for (int j = 0; j < R; ++j) {
    for (int t = 0; t < N; ++t) {
      y[t * w.rows + r0 + j] = hn::GetLane(hn::SumOfLanes(df, acc[j][t])) + offset[j][t];
    }
  }
}
#else
constexpr bool kPairGemv = false;
#endif

bool IntegerGemmSupported(TensorType type) {
  return HWY_TARGET == HWY_AVX3_DL && (type == TensorType::q4_0 || type == TensorType::q4_1 ||
                                       type == TensorType::q8_0 || type == TensorType::q4_k);
}

IntegerGemv IntegerGemvKind(TensorType type, int activation_bits) {
  const bool q4 = type == TensorType::q4_0 || type == TensorType::q4_1;
  if (HWY_TARGET == HWY_AVX3_DL) {
    const bool vnni = q4 ? activation_bits == 8 || activation_bits == 16
                         : type == TensorType::q8_0 && activation_bits == 16;
    return vnni ? IntegerGemv::vnni : IntegerGemv::none;
  }
  const bool pairs = kPairGemv && (q4 ? activation_bits == 8 || activation_bits == 16
                                      : type == TensorType::q8_0 && activation_bits == 16);
  return pairs ? IntegerGemv::pairs : IntegerGemv::none;
}

void IntGemvRows(const WeightView& w, const QuantizedActivations& xq,
                 [[maybe_unused]] std::int64_t n, [[maybe_unused]] float* y,
                 [[maybe_unused]] std::int64_t row_begin, [[maybe_unused]] std::int64_t row_end) {
#if HWY_TARGET == HWY_AVX3_DL
  if (IntegerGemvKind(w.type, xq.bits) == IntegerGemv::vnni) {
    if (w.type != TensorType::q8_0 && xq.bits == 16 && xq.byte_planes.size() != 2 * xq.q16.size()) {
      throw Error(
          "matmul: the integer GEMV needs the byte planes of 16-bit activations "
          "(split_byte_planes)");
    }
    switch (w.type) {
      case TensorType::q4_0:
        return xq.bits == 8
                   ? group_gemv_rows<TensorType::q4_0, 8>(w, xq, n, y, row_begin, row_end)
                   : group_gemv_rows<TensorType::q4_0, 16>(w, xq, n, y, row_begin, row_end);
      case TensorType::q4_1:
        return xq.bits == 8
                   ? group_gemv_rows<TensorType::q4_1, 8>(w, xq, n, y, row_begin, row_end)
                   : group_gemv_rows<TensorType::q4_1, 16>(w, xq, n, y, row_begin, row_end);
      default:
        return gemv_tiles(
            n, row_begin, row_end, [&](auto nt, auto rt, std::int64_t t, std::int64_t r) {
              q8_0_gemv_tile<decltype(nt)::value, decltype(rt)::value>(w, xq, t, y + t * w.rows, r);
            });
    }
  }
#elif HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_AVX3
  if (IntegerGemvKind(w.type, xq.bits) == IntegerGemv::pairs) {
    return with_type(w.type, [&](auto type) {
      constexpr TensorType T = decltype(type)::value;
      if constexpr (T == TensorType::q4_0 || T == TensorType::q4_1 || T == TensorType::q8_0) {
        gemv_tiles(n, row_begin, row_end, [&](auto nt, auto rt, std::int64_t t, std::int64_t r) {
          constexpr int N = decltype(nt)::value, R = decltype(rt)::value;
          if constexpr (T != TensorType::q8_0) {
            if (xq.bits == 8) return pair_gemv_tile<T, 8, N, R>(w, xq, t, y + t * w.rows, r);
          }
          pair_gemv_tile<T, 16, N, R>(w, xq, t, y + t * w.rows, r);
        });
      }
    });
  }
#endif
  throw Error(std::string("matmul: no integer GEMV for ") + std::string(info(w.type).name) +
              " weights with " + std::to_string(xq.bits) + "-bit activations on this CPU");
}

std::size_t GemmScratchBytes(const WeightView& w, [[maybe_unused]] int activation_bits) {
#if HWY_TARGET == HWY_AVX3_DL
  const std::int64_t blocks = w.cols / kBlock;
  const std::size_t scale_bytes = std::size_t(4 * blocks * kPanelRows) * sizeof(float);
  if (activation_bits == 8) return int_code_bytes<4>(blocks) + scale_bytes;
  if (activation_bits == 16) return int_code_bytes<2>(blocks) + scale_bytes;
#endif
  return std::size_t(w.cols) * 2 * kF32PanelRows * sizeof(float);
}

void GemmRows(const GemmTask& task, const GemmScratch& scratch) {
#if HWY_TARGET == HWY_AVX3_DL
  if (task.xq && IntegerGemmSupported(task.w->type)) {
    if (task.xq->bits == 8) return int_gemm<4>(task, task.xq->q8.data(), scratch);
    return int_gemm<2>(task, task.xq->q16.data(), scratch);
  }
#endif
  f32_gemm(task, scratch);
}

}  // namespace HWY_NAMESPACE
}  // namespace cocktail::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cocktail::cpu {

HWY_EXPORT(GemvRows);
HWY_EXPORT(IntegerGemmSupported);
HWY_EXPORT(QuantizeActivations);
HWY_EXPORT(GemmScratchBytes);
HWY_EXPORT(GemmRows);
HWY_EXPORT(IntegerGemvKind);
HWY_EXPORT(IntGemvRows);

void gemv_rows(const WeightView& w, const float* x, std::int64_t n, float* y,
               std::int64_t row_begin, std::int64_t row_end) {
  HWY_DYNAMIC_DISPATCH(GemvRows)(w, x, n, y, row_begin, row_end);
}

QuantizedActivations::QuantizedActivations(int activation_bits, std::int64_t tokens,
                                           std::int64_t n_cols)
    : bits(activation_bits), cols(n_cols) {
  if (bits == 8) {
    q8.resize(std::size_t(tokens * cols));
  } else {
    q16.resize(std::size_t(tokens * cols));
  }
  d.resize(std::size_t(tokens * (cols / kActivationBlock)));
  s.resize(d.size());
}

bool integer_gemm_supported(TensorType type) {
  return HWY_DYNAMIC_DISPATCH(IntegerGemmSupported)(type);
}

void quantize_activations(const float* x, std::int64_t token_begin, std::int64_t token_end,
                          QuantizedActivations& out) {
  HWY_DYNAMIC_DISPATCH(QuantizeActivations)(x, token_begin, token_end, out);
}

GemmScratch::GemmScratch(std::size_t bytes) : buffer_(hwy::AllocateAligned<std::uint8_t>(bytes)) {
  if (!buffer_)
    throw Error("matmul: cannot allocate " + std::to_string(bytes) + " bytes of scratch");
}

std::size_t gemm_scratch_bytes(const WeightView& w, int activation_bits) {
  return HWY_DYNAMIC_DISPATCH(GemmScratchBytes)(w, activation_bits);
}

void gemm_rows(const GemmTask& task, const GemmScratch& scratch) {
  HWY_DYNAMIC_DISPATCH(GemmRows)(task, scratch);
}

IntegerGemv integer_gemv(TensorType type, int activation_bits) {
  return HWY_DYNAMIC_DISPATCH(IntegerGemvKind)(type, activation_bits);
}

bool integer_gemv_supported(TensorType type, int activation_bits) {
  return integer_gemv(type, activation_bits) != IntegerGemv::none;
}

void split_byte_planes(QuantizedActivations& xq) {
  if (xq.bits != 16) throw Error("split_byte_planes: needs 16-bit activations");
  xq.byte_planes.resize(xq.q16.size() * 2);
  for (std::size_t block = 0; block < xq.q16.size() / kActivationBlock; ++block) {
    const std::int16_t* q = xq.q16.data() + block * kActivationBlock;
    std::uint8_t* high = xq.byte_planes.data() + block * 2 * kActivationBlock;
    std::uint8_t* low = high + kActivationBlock;
    for (std::int64_t j = 0; j < kActivationBlock; ++j) {
      high[j] = std::uint8_t(q[j] >> 8);  // arithmetic shift: the signed high byte
      low[j] = std::uint8_t(q[j] & 0xFF);
    }
  }
}

void int_gemv_rows(const WeightView& w, const QuantizedActivations& xq, std::int64_t n, float* y,
                   std::int64_t row_begin, std::int64_t row_end) {
  HWY_DYNAMIC_DISPATCH(IntGemvRows)(w, xq, n, y, row_begin, row_end);
}

}  // namespace cocktail::cpu
#endif
