// The decode GEMV over weights copied into groups of 16 rows (row_groups.hpp), and the copy.

#include "compute/row_groups.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "cocktail/error.hpp"
#include "quant/quantizer.hpp"

// Highway compiles this file once per SIMD target: the order of these lines matters.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "compute/row_groups.cpp"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
// clang-format on
#include <hwy/cache_control.h>

HWY_BEFORE_NAMESPACE();
namespace cocktail::cpu {
namespace HWY_NAMESPACE {

// The targets with a row-group kernel: AVX-512 VNNI, and AVX2 (see its section).
#define COCKTAIL_ROW_GROUP_KERNELS (HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2)

#if COCKTAIL_ROW_GROUP_KERNELS

constexpr int kBlock = 32;
// How many blocks ahead the kernel prefetches (8 × 320 bytes for Q4): the hardware prefetcher
// alone left a large Q4_1 read measurably below the bandwidth it reaches with this.
constexpr int kPrefetchBlocks = 8;

std::int32_t dword_at(const void* p) {
  std::int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Group g's block b: codes, then scales and (Q4) offsets.
template <TensorType T>
constexpr std::size_t kGroupCodeBytes = T == TensorType::q8_0 ? 512 : 256;

#endif

#if HWY_TARGET == HWY_AVX3_DL

// As in matmul_kernels.cpp: Highway's AVX3_DL attributes lack avx512vnni.
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512vnni")

// Vector v of a Q4 block's codes: its low nibbles (elements 4v..4v+3 of each row) and its high
// ones (16+4v..19+4v).
HWY_INLINE void q4_codes(const std::uint8_t* codes, int v, __m512i& low, __m512i& high) {
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const __m512i bytes = _mm512_loadu_si512(codes + 64 * v);
  low = _mm512_and_si512(bytes, nibble);
  high = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), nibble);
}

// Σ code·q of one Q4 block for each of the group's 16 rows, q being the block's activations.
template <int Bits>
HWY_INLINE __m512i q4_block_dot(const std::uint8_t* codes, const std::uint8_t* x) {
  const auto lane = [](const std::uint8_t* p) { return _mm512_set1_epi32(dword_at(p)); };
  __m512i low, high;
  if constexpr (Bits == 8) {
    __m512i low_sum = _mm512_setzero_si512(), high_sum = _mm512_setzero_si512();
    for (int v = 0; v < 4; ++v) {
      q4_codes(codes, v, low, high);
      low_sum = _mm512_dpbusd_epi32(low_sum, low, lane(x + 4 * v));
      high_sum = _mm512_dpbusd_epi32(high_sum, high, lane(x + 16 + 4 * v));
    }
    return _mm512_add_epi32(low_sum, high_sum);
  } else {
    // x holds the block's signed high bytes, then its unsigned low bytes (split_byte_planes):
    // the codes (0-15) are the unsigned operand against the first and the signed one against
    // the second.
    const std::uint8_t* h = x;
    const std::uint8_t* l = x + kBlock;
    __m512i h0 = _mm512_setzero_si512(), h1 = h0, l0 = h0, l1 = h0;
    for (int v = 0; v < 4; ++v) {
      q4_codes(codes, v, low, high);
      h0 = _mm512_dpbusd_epi32(h0, low, lane(h + 4 * v));
      h1 = _mm512_dpbusd_epi32(h1, high, lane(h + 16 + 4 * v));
      l0 = _mm512_dpbusd_epi32(l0, lane(l + 4 * v), low);
      l1 = _mm512_dpbusd_epi32(l1, lane(l + 16 + 4 * v), high);
    }
    return _mm512_add_epi32(_mm512_slli_epi32(_mm512_add_epi32(h0, h1), 8),
                            _mm512_add_epi32(l0, l1));
  }
}

// Σ code·q of one Q8_0 block for each of the group's 16 rows, q 16-bit.
HWY_INLINE __m512i q8_block_dot(const std::uint8_t* codes, const std::int16_t* x) {
  __m512i even = _mm512_setzero_si512(), odd = _mm512_setzero_si512();
  for (int p = 0; p < 16; p += 2) {
    const auto pair = [&](int i) {
      return _mm512_cvtepi8_epi16(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 32 * i)));
    };
    even = _mm512_dpwssd_epi32(even, pair(p), _mm512_set1_epi32(dword_at(x + 2 * p)));
    odd = _mm512_dpwssd_epi32(odd, pair(p + 1), _mm512_set1_epi32(dword_at(x + 2 * p + 2)));
  }
  return _mm512_add_epi32(even, odd);
}

// y[t][16g + r] for the group's rows r < `valid` and t < N tokens: a block adds
// d·dx·Σ code·q (+ m·s for Q4, s = dx·Σq).
template <TensorType T, int Bits, int N>
void group_rows(const RowGroupWeights& w, std::int64_t g, const QuantizedActivations& xq, float* y,
                int valid) {
  constexpr bool q4 = T != TensorType::q8_0;
  constexpr std::size_t kCodeBytes = kGroupCodeBytes<T>;
  const std::size_t block_bytes = w.block_bytes();
  const std::int64_t blocks = w.blocks();
  const std::uint8_t* p = w.group(g);
  __m512 acc[N];
  for (__m512& a : acc) a = _mm512_setzero_ps();
  for (std::int64_t b = 0; b < blocks; ++b, p += block_bytes) {
    for (std::size_t line = 0; line < block_bytes; line += 64) {
      hwy::Prefetch(p + kPrefetchBlocks * block_bytes + line);
    }
    const auto halves = [&](std::size_t at) {
      return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + at)));
    };
    const __m512 d = halves(kCodeBytes);
    const __m512 m = q4 ? halves(kCodeBytes + 32) : _mm512_setzero_ps();
    for (int t = 0; t < N; ++t) {
      const std::int64_t tb = t * blocks + b;
      __m512i dot;
      if constexpr (!q4) {
        dot = q8_block_dot(p, xq.q16.data() + tb * kBlock);
      } else if constexpr (Bits == 8) {
        dot = q4_block_dot<8>(p, reinterpret_cast<const std::uint8_t*>(xq.q8.data()) + tb * kBlock);
      } else {
        dot = q4_block_dot<16>(p, xq.byte_planes.data() + tb * 2 * kBlock);
      }
      const __m512 dd = _mm512_mul_ps(d, _mm512_set1_ps(xq.d[std::size_t(tb)]));
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), dd, acc[t]);
      if constexpr (q4) acc[t] = _mm512_fmadd_ps(m, _mm512_set1_ps(xq.s[std::size_t(tb)]), acc[t]);
    }
  }
  const auto rows = __mmask16((1u << valid) - 1);
  for (int t = 0; t < N; ++t) {
    _mm512_mask_storeu_ps(y + t * w.rows() + g * kRowGroupRows, rows, acc[t]);
  }
}

HWY_POP_ATTRIBUTES

#elif HWY_TARGET == HWY_AVX2

// The same copy and the same integer sums with 256-bit vectors: a group's 16 rows are two
// halves of 8 rows, and each vpdpbusd becomes vpmaddubsw (unsigned 8-bit times signed 8-bit,
// pairs summed in 16 bits) and, once a block, vpmaddwd against ones (or 256) to 32 bits. With
// codes below 16 no 16-bit sum saturates or overflows (bounds below), so the block's sums are
// the VNNI kernel's exactly, and a block costs about half the vector operations of the 16-bit
// pair GEMV in the file's layout, which also spends scalar work on every block's scale; with
// 8-bit activations (llama.cpp's rounding) half again.

HWY_INLINE __m256i lane_of(const std::uint8_t* p) {
  return _mm256_set1_epi32(dword_at(p));
}

HWY_INLINE __m256i widen_sum(__m256i pairs16, short factor) {
  return _mm256_madd_epi16(pairs16, _mm256_set1_epi16(factor));
}

// Vector v of a Q4 block's codes for the group's half k of 8 rows: its low nibbles (elements
// 4v..4v+3 of each row) and its high ones (16+4v..19+4v).
HWY_INLINE void q4_codes(const std::uint8_t* codes, int v, int k, __m256i& low, __m256i& high) {
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const __m256i bytes =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 64 * v + 32 * k));
  low = _mm256_and_si256(bytes, nibble);
  high = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), nibble);
}

// Σ code·q of one Q4 block for the group's two halves of 8 rows, q 16-bit as byte planes
// (split_byte_planes): 32 signed high bytes h, then 32 unsigned low bytes l; the codes (0-15)
// are the unsigned operand against h and the signed one against l. A 16-bit lane sums two
// products per vpmaddubsw, so the 8 against h stay within 8·2·15·128 = 30720 and each 4 against
// l within 4·2·15·255 = 30600. Both halves in one pass share each broadcast of activations.
HWY_INLINE void q4_block_dot(const std::uint8_t* codes, const std::uint8_t* x, __m256i (&dot)[2]) {
  const std::uint8_t* h = x;
  const std::uint8_t* l = x + kBlock;
  __m256i high_plane[2], low_of_low[2], low_of_high[2];
  for (int k = 0; k < 2; ++k)
    high_plane[k] = low_of_low[k] = low_of_high[k] = _mm256_setzero_si256();
  for (int v = 0; v < 4; ++v) {
    const __m256i h_low = lane_of(h + 4 * v), h_high = lane_of(h + 16 + 4 * v);
    const __m256i l_low = lane_of(l + 4 * v), l_high = lane_of(l + 16 + 4 * v);
    for (int k = 0; k < 2; ++k) {
      __m256i low, high;
      q4_codes(codes, v, k, low, high);
      high_plane[k] = _mm256_add_epi16(high_plane[k], _mm256_maddubs_epi16(low, h_low));
      high_plane[k] = _mm256_add_epi16(high_plane[k], _mm256_maddubs_epi16(high, h_high));
      low_of_low[k] = _mm256_add_epi16(low_of_low[k], _mm256_maddubs_epi16(l_low, low));
      low_of_high[k] = _mm256_add_epi16(low_of_high[k], _mm256_maddubs_epi16(l_high, high));
    }
  }
  for (int k = 0; k < 2; ++k) {
    dot[k] = _mm256_add_epi32(
        widen_sum(high_plane[k], 256),
        _mm256_add_epi32(widen_sum(low_of_low[k], 1), widen_sum(low_of_high[k], 1)));
  }
}

// Σ code·q of one Q4 block for the group's two halves of 8 rows, q 8-bit: the codes (0-15) are
// the unsigned operand. The 8 products a 16-bit lane sums stay within 8·2·15·127 = 30480.
HWY_INLINE void q4_block_dot8(const std::uint8_t* codes, const std::uint8_t* x, __m256i (&dot)[2]) {
  __m256i sum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
  for (int v = 0; v < 4; ++v) {
    const __m256i x_low = lane_of(x + 4 * v), x_high = lane_of(x + 16 + 4 * v);
    for (int k = 0; k < 2; ++k) {
      __m256i low, high;
      q4_codes(codes, v, k, low, high);
      sum[k] = _mm256_add_epi16(sum[k], _mm256_maddubs_epi16(low, x_low));
      sum[k] = _mm256_add_epi16(sum[k], _mm256_maddubs_epi16(high, x_high));
    }
  }
  for (int k = 0; k < 2; ++k) dot[k] = widen_sum(sum[k], 1);
}

// Σ code·q of one Q8_0 block for the group's two halves of 8 rows, q 16-bit.
HWY_INLINE void q8_block_dot(const std::uint8_t* codes, const std::int16_t* x, __m256i (&dot)[2]) {
  __m256i even[2], odd[2];
  for (int k = 0; k < 2; ++k) even[k] = odd[k] = _mm256_setzero_si256();
  for (int p = 0; p < 16; p += 2) {
    const __m256i x_even = lane_of(reinterpret_cast<const std::uint8_t*>(x + 2 * p));
    const __m256i x_odd = lane_of(reinterpret_cast<const std::uint8_t*>(x + 2 * p + 2));
    for (int k = 0; k < 2; ++k) {
      const auto pair = [&](int i) {
        return _mm256_cvtepi8_epi16(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + 32 * i + 16 * k)));
      };
      even[k] = _mm256_add_epi32(even[k], _mm256_madd_epi16(pair(p), x_even));
      odd[k] = _mm256_add_epi32(odd[k], _mm256_madd_epi16(pair(p + 1), x_odd));
    }
  }
  for (int k = 0; k < 2; ++k) dot[k] = _mm256_add_epi32(even[k], odd[k]);
}

// y[t][16g + r] for the group's rows r < `valid` and t < N tokens, as the VNNI group_rows.
template <TensorType T, int Bits, int N>
void group_rows(const RowGroupWeights& w, std::int64_t g, const QuantizedActivations& xq, float* y,
                int valid) {
  constexpr bool q4 = T != TensorType::q8_0;
  static_assert(Bits == 16 || q4, "the AVX2 Q8_0 row-group kernel takes 16-bit activations");
  constexpr std::size_t kCodeBytes = kGroupCodeBytes<T>;
  const std::size_t block_bytes = w.block_bytes();
  const std::int64_t blocks = w.blocks();
  const std::uint8_t* p = w.group(g);
  __m256 acc[N][2];
  for (auto& token : acc)
    for (__m256& a : token) a = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < blocks; ++b, p += block_bytes) {
    for (std::size_t line = 0; line < block_bytes; line += 64) {
      hwy::Prefetch(p + kPrefetchBlocks * block_bytes + line);
    }
    for (int t = 0; t < N; ++t) {
      const std::int64_t tb = t * blocks + b;
      __m256i dot[2];
      if constexpr (q4 && Bits == 8) {
        q4_block_dot8(p, reinterpret_cast<const std::uint8_t*>(xq.q8.data()) + tb * kBlock, dot);
      } else if constexpr (q4) {
        q4_block_dot(p, xq.byte_planes.data() + tb * 2 * kBlock, dot);
      } else {
        q8_block_dot(p, xq.q16.data() + tb * kBlock, dot);
      }
      for (int k = 0; k < 2; ++k) {
        const auto halves = [&](std::size_t at) {
          return _mm256_cvtph_ps(
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at + 16 * k)));
        };
        const __m256 dd = _mm256_mul_ps(halves(kCodeBytes), _mm256_set1_ps(xq.d[std::size_t(tb)]));
        acc[t][k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[k]), dd, acc[t][k]);
        if constexpr (q4) {
          acc[t][k] = _mm256_fmadd_ps(halves(kCodeBytes + 32),
                                      _mm256_set1_ps(xq.s[std::size_t(tb)]), acc[t][k]);
        }
      }
    }
  }
  for (int t = 0; t < N; ++t) {
    alignas(32) float rows[kRowGroupRows];
    _mm256_store_ps(rows, acc[t][0]);
    _mm256_store_ps(rows + 8, acc[t][1]);
    std::memcpy(y + t * w.rows() + g * kRowGroupRows, rows, sizeof(float) * std::size_t(valid));
  }
}

#endif  // HWY_TARGET

#if COCKTAIL_ROW_GROUP_KERNELS

template <TensorType T, int Bits>
void groups_of(const RowGroupWeights& w, const QuantizedActivations& xq, std::int64_t n, float* y,
               std::int64_t row_begin, std::int64_t row_end) {
  for (std::int64_t g = row_begin / kRowGroupRows; g * kRowGroupRows < row_end; ++g) {
    const int valid = int(std::min(kRowGroupRows, row_end - g * kRowGroupRows));
    switch (n) {
      case 1:
        group_rows<T, Bits, 1>(w, g, xq, y, valid);
        break;
      case 2:
        group_rows<T, Bits, 2>(w, g, xq, y, valid);
        break;
      case 3:
        group_rows<T, Bits, 3>(w, g, xq, y, valid);
        break;
      default:
        group_rows<T, Bits, 4>(w, g, xq, y, valid);
        break;
    }
  }
}

#endif  // COCKTAIL_ROW_GROUP_KERNELS

// Which weights and activations this target's row-group kernel takes.
bool RowGroupGemvSupported(TensorType type, int activation_bits) {
  const bool q4 = type == TensorType::q4_0 || type == TensorType::q4_1;
  if (HWY_TARGET == HWY_AVX3_DL) return integer_gemv(type, activation_bits) == IntegerGemv::vnni;
  return HWY_TARGET == HWY_AVX2 && (q4 ? activation_bits == 8 || activation_bits == 16
                                       : type == TensorType::q8_0 && activation_bits == 16);
}

// Only the targets with kernels run; row_group_gemv checks the type and bits before dispatching.
void RowGroupGemv(const RowGroupWeights& w, const QuantizedActivations& xq,
                  [[maybe_unused]] std::int64_t n, [[maybe_unused]] float* y,
                  [[maybe_unused]] std::int64_t row_begin, [[maybe_unused]] std::int64_t row_end) {
#if COCKTAIL_ROW_GROUP_KERNELS
  switch (w.type()) {
    case TensorType::q4_0:
      return xq.bits == 8 ? groups_of<TensorType::q4_0, 8>(w, xq, n, y, row_begin, row_end)
                          : groups_of<TensorType::q4_0, 16>(w, xq, n, y, row_begin, row_end);
    case TensorType::q4_1:
      return xq.bits == 8 ? groups_of<TensorType::q4_1, 8>(w, xq, n, y, row_begin, row_end)
                          : groups_of<TensorType::q4_1, 16>(w, xq, n, y, row_begin, row_end);
    default:
      return groups_of<TensorType::q8_0, 16>(w, xq, n, y, row_begin, row_end);
  }
#else
  throw Error("matmul: no row-group GEMV for " + std::string(info(w.type()).name) +
              " weights with " + std::to_string(xq.bits) + "-bit activations on this CPU");
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace cocktail::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cocktail::cpu {

HWY_EXPORT(RowGroupGemv);
HWY_EXPORT(RowGroupGemvSupported);

namespace {

// Bytes of one group's block: codes, scales and (Q4) offsets.
std::size_t group_block_bytes(TensorType type) {
  return type == TensorType::q8_0 ? 512 + 32 : 256 + 64;
}

// Row r's block of the file's layout, written into a group block at out as lane r.
void copy_q4_block(TensorType type, const std::uint8_t* block, int r, std::uint8_t* out) {
  const std::size_t codes_at = type == TensorType::q4_1 ? 4 : 2;
  for (int v = 0; v < 4; ++v) std::memcpy(out + 64 * v + 4 * r, block + codes_at + 4 * v, 4);
  std::memcpy(out + 256 + 2 * r, block, 2);
  if (type == TensorType::q4_1) {
    std::memcpy(out + 288 + 2 * r, block + 2, 2);
    return;
  }
  std::uint16_t scale;
  std::memcpy(&scale, block, 2);
  const float offset = -8.0f * f32_from_f16_bits(scale);
  if (!std::isfinite(offset) && std::isfinite(f32_from_f16_bits(scale))) {
    throw Error("q4_0 scale " + std::to_string(f32_from_f16_bits(scale)) +
                " is too large: its offset -8·scale does not fit an fp16");
  }
  const std::uint16_t bits = f16_bits_from_f32(offset);
  std::memcpy(out + 288 + 2 * r, &bits, 2);
}

void copy_q8_block(const std::uint8_t* block, int r, std::uint8_t* out) {
  for (int p = 0; p < 16; ++p) std::memcpy(out + 32 * p + 2 * r, block + 2 + 2 * p, 2);
  std::memcpy(out + 512 + 2 * r, block, 2);
}

}  // namespace

RowGroupWeights::RowGroupWeights(const WeightView& w, HugePageArena& arena)
    : type_(w.type), rows_(w.rows), cols_(w.cols) {
  if (type_ != TensorType::q4_0 && type_ != TensorType::q4_1 && type_ != TensorType::q8_0) {
    throw Error("row groups hold q4_0, q4_1 or q8_0 weights, not " + std::string(info(type_).name));
  }
  const std::int64_t groups = (rows_ + kRowGroupRows - 1) / kRowGroupRows;
  const std::int64_t blocks = this->blocks();
  const std::size_t bytes = std::size_t(groups * blocks) * block_bytes();
  bytes_ = arena.allocate(bytes);
  std::memset(bytes_.get(), 0, bytes);  // the padding rows: codes, scales and offsets 0
  const std::size_t stride = row_bytes(type_, cols_);
  const std::size_t file_block = std::size_t(info(type_).block_bytes);
  for (std::int64_t row = 0; row < rows_; ++row) {
    const auto* in = reinterpret_cast<const std::uint8_t*>(w.data) + std::size_t(row) * stride;
    std::uint8_t* out = bytes_.get() + std::size_t(row / kRowGroupRows * blocks) * block_bytes();
    const int r = int(row % kRowGroupRows);
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::uint8_t* block = in + std::size_t(b) * file_block;
      std::uint8_t* group_block = out + std::size_t(b) * block_bytes();
      if (type_ == TensorType::q8_0) {
        copy_q8_block(block, r, group_block);
      } else {
        copy_q4_block(type_, block, r, group_block);
      }
    }
  }
}

std::int64_t RowGroupWeights::blocks() const {
  return cols_ / info(type_).block_elements;
}

std::size_t RowGroupWeights::block_bytes() const {
  return group_block_bytes(type_);
}

const std::uint8_t* RowGroupWeights::group(std::int64_t g) const {
  return bytes_.get() + std::size_t(g * blocks()) * block_bytes();
}

bool row_group_gemv_supported(TensorType type, int activation_bits) {
  return HWY_DYNAMIC_DISPATCH(RowGroupGemvSupported)(type, activation_bits);
}

void row_group_gemv(const RowGroupWeights& w, const QuantizedActivations& xq, std::int64_t n,
                    float* y, std::int64_t row_begin, std::int64_t row_end) {
  if (!row_group_gemv_supported(w.type(), xq.bits)) {
    throw Error("matmul: no row-group GEMV for " + std::string(info(w.type()).name) +
                " weights with " + std::to_string(xq.bits) + "-bit activations on this CPU");
  }
  if (w.type() != TensorType::q8_0 && xq.bits == 16 && xq.byte_planes.size() != 2 * xq.q16.size()) {
    throw Error(
        "matmul: the row-group GEMV needs the byte planes of 16-bit activations "
        "(split_byte_planes)");
  }
  HWY_DYNAMIC_DISPATCH(RowGroupGemv)(w, xq, n, y, row_begin, row_end);
}

}  // namespace cocktail::cpu
#endif
