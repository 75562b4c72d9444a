// Tests of the reference dequantizer (core) and the CPU backend's Compute: every expectation is
// a float64 value computed here from the block formats' definitions (ggml's layouts; the
// dequantizer was also checked row for row against gguf-py on SmolLM2-135M's Q4_1 and Q8_0
// tensors).

#include <gtest/gtest.h>
#include <hwy/aligned_allocator.h>
#include <hwy/targets.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numbers>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cocktail/dequantize.hpp"
#include "cocktail/error.hpp"
#include "cocktail/float16.hpp"
#include "compute/cpu_compute.hpp"
#include "compute/huge_page_arena.hpp"
#include "compute/matmul_kernels.hpp"
#include "compute/row_groups.hpp"
#include "memory/huge_pages.hpp"
#include "support/layer_norm_reference.hpp"
#include "support/rope_reference.hpp"
#include "support/simd_targets.hpp"

namespace cocktail::cpu {
namespace {

using Bytes = std::vector<std::byte>;

std::uint16_t half_bits(double x) {
  return std::bit_cast<std::uint16_t>(static_cast<Float16>(x));
}

void put_u16(Bytes& b, std::size_t at, std::uint16_t v) {
  std::memcpy(b.data() + at, &v, 2);
}

void put_u8(Bytes& b, std::size_t at, unsigned v) {
  b[at] = std::byte(v & 0xFF);
}

std::vector<float> dequantize(TensorType t, const Bytes& row, std::int64_t elements) {
  std::vector<float> out(static_cast<std::size_t>(elements));
  dequantize_row(t, row.data(), elements, out.data());
  return out;
}

// ---- dequantize_row on hand-made blocks --------------------------------------------------

TEST(Dequantize, Q8_0TwoBlocks) {
  Bytes b(68);
  put_u16(b, 0, half_bits(0.5));
  put_u16(b, 34, half_bits(-0.25));
  for (int i = 0; i < 32; ++i) {
    put_u8(b, 2 + i, unsigned(8 * i - 128));
    put_u8(b, 36 + i, unsigned(127 - i));
  }
  const auto y = dequantize(TensorType::q8_0, b, 64);
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(y[i], 0.5 * (8 * i - 128)) << i;
    EXPECT_EQ(y[32 + i], -0.25 * (127 - i)) << i;
  }
}

int nibble_code(int e) {
  return (5 * e + 3) % 16;
}

// Q4_0 and Q4_1 store element j in the low nibble of byte j and element j + 16 in its high one.
void put_nibbles(Bytes& b, std::size_t at) {
  for (int j = 0; j < 16; ++j)
    put_u8(b, at + j, unsigned(nibble_code(j) | nibble_code(j + 16) << 4));
}

TEST(Dequantize, Q4_0) {
  Bytes b(18);
  put_u16(b, 0, half_bits(0.25));
  put_nibbles(b, 2);
  const auto y = dequantize(TensorType::q4_0, b, 32);
  for (int e = 0; e < 32; ++e) EXPECT_EQ(y[e], 0.25 * (nibble_code(e) - 8)) << e;
}

TEST(Dequantize, Q4_1) {
  Bytes b(20);
  put_u16(b, 0, half_bits(0.125));
  put_u16(b, 2, half_bits(-1.5));
  put_nibbles(b, 4);
  const auto y = dequantize(TensorType::q4_1, b, 32);
  for (int e = 0; e < 32; ++e) EXPECT_EQ(y[e], 0.125 * nibble_code(e) - 1.5) << e;
}

TEST(Dequantize, Q4_KDistinctScalesAndMinsPerSubBlock) {
  // 6-bit values above 15 in every sub-block, so the top bits stored apart are exercised.
  const int sc[8] = {1, 63, 17, 40, 5, 33, 62, 48};
  const int mn[8] = {0, 7, 63, 21, 50, 3, 44, 16};
  Bytes b(144);
  put_u16(b, 0, half_bits(0.5));
  put_u16(b, 2, half_bits(0.25));
  for (int j = 0; j < 4; ++j) {
    put_u8(b, 4 + j, unsigned((sc[j] & 63) | (sc[j + 4] >> 4) << 6));
    put_u8(b, 8 + j, unsigned((mn[j] & 63) | (mn[j + 4] >> 4) << 6));
    put_u8(b, 12 + j, unsigned((sc[j + 4] & 15) | (mn[j + 4] & 15) << 4));
  }
  auto code = [](int e) { return (7 * e + e / 16) % 16; };
  // 64 elements per 32 bytes: the first 32 in the low nibbles, the next 32 in the high ones.
  for (int e = 0; e < 256; ++e) {
    const std::size_t at = 16 + std::size_t(e / 64 * 32 + e % 32);
    const unsigned shift = e % 64 < 32 ? 0 : 4;
    b[at] |= std::byte(code(e) << shift);
  }
  const auto y = dequantize(TensorType::q4_k, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int s = e / 32;
    EXPECT_FLOAT_EQ(y[e], float(0.5 * sc[s] * code(e) - 0.25 * mn[s])) << e;
  }
}

TEST(Dequantize, Q6_KDistinctScalesPerSixteen) {
  Bytes b(210);
  std::int8_t sc[16];
  for (int i = 0; i < 16; ++i) sc[i] = std::int8_t(i * 37 % 255 - 127);
  std::memcpy(b.data() + 192, sc, 16);
  put_u16(b, 208, half_bits(0.0625));
  auto code = [](int e) { return (11 * e + 5) % 64; };
  // Element 128h + 32k + l: low 4 bits in ql[64h + l + 32(k % 2)] (low nibble for k < 2, high
  // for k >= 2), high 2 bits at bits 2k of qh[32h + l].
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, k = e % 128 / 32, l = e % 32;
    const std::size_t ql = std::size_t(64 * h + l + 32 * (k % 2));
    b[ql] |= std::byte((code(e) & 15) << (k < 2 ? 0 : 4));
    b[128 + std::size_t(32 * h + l)] |= std::byte((code(e) >> 4) << (2 * k));
  }
  const auto y = dequantize(TensorType::q6_k, b, 256);
  for (int e = 0; e < 256; ++e) {
    EXPECT_FLOAT_EQ(y[e], float(0.0625 * sc[e / 16] * (code(e) - 32))) << e;
  }
}

TEST(Dequantize, PlainFloats) {
  const std::uint16_t halves[] = {0x3C00, 0xC000, 0x3555, 0x0001, 0x7BFF, 0x8000};
  const double half_values[] = {1.0, -2.0, 1365.0 / 4096.0, std::ldexp(1.0, -24), 65504.0, -0.0};
  Bytes h(12);
  std::memcpy(h.data(), halves, 12);
  const auto yh = dequantize(TensorType::f16, h, 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(yh[i], half_values[i]) << i;

  const std::uint16_t brains[] = {0x3F80, 0xC040, 0x4049, 0x0000};
  const double brain_values[] = {1.0, -3.0, 3.140625, 0.0};
  Bytes bf(8);
  std::memcpy(bf.data(), brains, 8);
  const auto yb = dequantize(TensorType::bf16, bf, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(yb[i], brain_values[i]) << i;

  const float floats[] = {1.5f, -0.0f, 3e-39f};
  Bytes f(12);
  std::memcpy(f.data(), floats, 12);
  const auto yf = dequantize(TensorType::f32, f, 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(yf[i], floats[i]) << i;
}

TEST(Dequantize, EveryHalfConvertsExactly) {
  for (unsigned bits = 0; bits < 65536; ++bits) {
    const double sign = (bits & 0x8000) != 0 ? -1.0 : 1.0;
    const int exponent = int(bits >> 10) & 0x1F;
    const int mantissa = int(bits) & 0x3FF;
    const float got = f32_from_f16(std::uint16_t(bits));
    if (exponent == 0x1F) {
      EXPECT_EQ(std::isnan(got), mantissa != 0) << bits;
      if (mantissa == 0) {
        EXPECT_EQ(got, sign * INFINITY) << bits;
      }
    } else {
      const double want = exponent == 0 ? sign * std::ldexp(mantissa, -24)
                                        : sign * std::ldexp(1024 + mantissa, exponent - 25);
      ASSERT_EQ(got, want) << bits;
      ASSERT_EQ(std::signbit(got), sign < 0) << bits;
    }
  }
}

TEST(Dequantize, RejectsPartialBlocks) {
  Bytes b(40);
  float out[40];
  try {
    dequantize_row(TensorType::q4_1, b.data(), 33, out);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("q4_1 row of 33 elements"), std::string::npos) << e.what();
  }
  EXPECT_THROW(dequantize_row(TensorType::q6_k, b.data(), 128, out), Error);
}

// ---- matmul against a float64 reference -------------------------------------------------

// A random matrix of `type`, with sane scales: random code bytes, then the fp16 scale fields
// overwritten with small values (of both signs where the format allows).
Bytes random_weights(TensorType type, std::int64_t rows, std::int64_t cols, std::mt19937& rng) {
  const TensorTypeInfo ti = info(type);
  Bytes b(row_bytes(type, cols) * std::size_t(rows));
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::uniform_real_distribution<double> scale(0.002, 0.03);
  if (type == TensorType::f32 || type == TensorType::f16 || type == TensorType::bf16) {
    for (std::size_t i = 0; i < std::size_t(rows * cols); ++i) {
      const auto v = float(value(rng));
      if (type == TensorType::f32) {
        std::memcpy(b.data() + 4 * i, &v, 4);
      } else {
        put_u16(b, 2 * i,
                type == TensorType::f16 ? half_bits(v)
                                        : std::uint16_t(std::bit_cast<std::uint32_t>(v) >> 16));
      }
    }
    return b;
  }
  for (std::byte& x : b) x = std::byte(byte(rng));
  for (std::size_t at = 0; at < b.size(); at += std::size_t(ti.block_bytes)) {
    switch (type) {
      case TensorType::q8_0:
      case TensorType::q4_0:
        put_u16(b, at, half_bits(scale(rng)));
        break;
      case TensorType::q4_1:  // offsets around -8 d, so weights take both signs
        put_u16(b, at, half_bits(scale(rng)));
        put_u16(b, at + 2, half_bits(-8 * scale(rng)));
        break;
      case TensorType::q4_k:
        put_u16(b, at, half_bits(scale(rng) / 32));
        put_u16(b, at + 2, half_bits(scale(rng) / 4));
        break;
      case TensorType::q6_k:
        put_u16(b, at + 208, half_bits(scale(rng) / 64));
        break;
      default:
        break;
    }
  }
  return b;
}

std::vector<float> random_activations(std::size_t count, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  // An outlier per 32-block now and then, as real activations have.
  for (std::size_t i = 5; i < count; i += 97) v[i] *= 12.0f;
  return v;
}

struct Problem {
  TensorType type;
  std::int64_t rows, cols, n;
  Bytes bytes;
  WeightView w;
  std::vector<float> x;
  std::vector<double> ref;         // [n][rows] exact products
  std::vector<double> magnitude;   // [n][rows] Σ|w||x|: the float error scale
  std::vector<double> int8_bound;  // [n][rows] the most 8-bit activations can move the product

  Problem(TensorType t, std::int64_t r, std::int64_t c, std::int64_t tokens, std::uint32_t seed)
      : type(t), rows(r), cols(c), n(tokens) {
    std::mt19937 rng(seed);
    bytes = random_weights(t, r, c, rng);
    w = {t, bytes.data(), r, c};
    x = random_activations(std::size_t(n * c), rng);
    ref.assign(std::size_t(n * r), 0.0);
    magnitude = ref;
    int8_bound = ref;
    std::vector<float> row(static_cast<std::size_t>(c));
    for (std::int64_t i = 0; i < r; ++i) {
      dequantize_row(t, bytes.data() + row_bytes(t, c) * std::size_t(i), c, row.data());
      for (std::int64_t k = 0; k < n; ++k) {
        const float* xk = x.data() + k * c;
        double sum = 0.0, mag = 0.0, bound = 0.0;
        for (std::int64_t j = 0; j < c; ++j) {
          sum += double(row[std::size_t(j)]) * xk[j];
          mag += std::abs(double(row[std::size_t(j)]) * xk[j]);
        }
        // Rounding x to 8 bits per 32-block moves each element by at most max|x| / 254.
        for (std::int64_t b0 = 0; b0 + 32 <= c; b0 += 32) {
          double amax = 0.0, wsum = 0.0;
          for (std::int64_t j = b0; j < b0 + 32; ++j) {
            amax = std::max(amax, std::abs(double(xk[j])));
            wsum += std::abs(double(row[std::size_t(j)]));
          }
          bound += amax / 254.0 * wsum;
        }
        const auto at = std::size_t(k * r + i);
        ref[at] = sum;
        magnitude[at] = mag;
        int8_bound[at] = bound;
      }
    }
  }

  // Checks y against the reference: float rounding, plus the rounding of activations to
  // `bits` (8 or 16; 0 for float activations).
  void check(const std::vector<float>& y, int bits, const std::string& what) const {
    const double rounding = bits == 0 ? 0.0 : 254.0 / (2.0 * ((1 << (bits - 1)) - 1));
    int bad = 0;
    for (std::size_t i = 0; i < ref.size() && bad < 5; ++i) {
      const double tol = 2e-5 * magnitude[i] + 1e-6 + rounding * int8_bound[i];
      if (!(std::abs(y[i] - ref[i]) <= tol)) {
        ADD_FAILURE() << what << " " << to_string(type) << " " << rows << "x" << cols << " n=" << n
                      << ": token " << i / std::size_t(rows) << " row " << i % std::size_t(rows)
                      << " got " << y[i] << " want " << ref[i] << " tol " << tol;
        ++bad;
      }
    }
  }
};

// The file's rows as this CPU Compute reads them in place, without a row-group copy.
CpuWeights in_place(const CpuCompute& compute, const WeightView& w) {
  return CpuWeights(w, nullptr, &compute);
}

constexpr TensorType kAllTypes[] = {TensorType::f32,  TensorType::f16,  TensorType::bf16,
                                    TensorType::q8_0, TensorType::q4_0, TensorType::q4_1,
                                    TensorType::q4_k, TensorType::q6_k};

std::int64_t cols_for(TensorType t) {
  return info(t).block_elements == 256 ? 512 : 96;
}

// Bits of the activations matmul rounds to, for `mode` and weights of `type`.
// The bits a product of n tokens rounds its activations to: the mode's, where this CPU runs the
// integer GEMV (decode, n <= kGemvMaxTokens) or GEMM for the type; else none (float).
int activation_bits(MatmulActivations mode, TensorType type, std::int64_t n) {
  if (mode == MatmulActivations::f32) return 0;
  const int bits = mode == MatmulActivations::int8 ? 8 : 16;
  const bool integer =
      n <= kGemvMaxTokens ? integer_gemv_supported(type, bits) : integer_gemm_supported(type);
  return integer ? bits : 0;
}

TEST(Matmul, EveryTypeTokenCountAndActivationMode) {
  for (MatmulActivations mode :
       {MatmulActivations::int8, MatmulActivations::int16, MatmulActivations::f32}) {
    CpuCompute compute(2, mode);
    std::uint32_t seed = 1;
    for (TensorType t : kAllTypes) {
      // 70 rows: partial panels and row tails; n from GEMV (1-4: integer with 16-bit
      // activations where the CPU and type allow, else float) to GEMM with token tails.
      for (std::int64_t n : {1, 2, 3, 4, 5, 13, 70}) {
        const Problem p(t, 70, cols_for(t), n, seed++);
        std::vector<float> y(std::size_t(n * p.rows), NAN);
        compute.matmul(in_place(compute, p.w), p.x, n, y);
        p.check(y, activation_bits(mode, t, n), "matmul mode " + std::to_string(int(mode)));
      }
    }
  }
}

TEST(Matmul, FloatRowsOfAnyLength) {
  CpuCompute compute(2);
  for (std::int64_t n : {1, 9}) {
    const Problem p(TensorType::f32, 33, 37, n, 7);
    std::vector<float> y(std::size_t(n * p.rows));
    compute.matmul(in_place(compute, p.w), p.x, n, y);
    p.check(y, false, "matmul");
  }
}

// The float GEMV kernel (the decode path with f32 or 8-bit activations, and for the types
// the integer GEMV does not take), called directly, on short rows and on rows of 70 blocks.
TEST(Matmul, GemvOfEveryType) {
  for (TensorType t : kAllTypes) {
    for (const std::int64_t cols : {cols_for(t), std::int64_t(2240)}) {
      if (cols % info(t).block_elements != 0) continue;
      for (std::int64_t n = 1; n <= kGemvMaxTokens; ++n) {
        const Problem p(t, 45, cols, n, 200 + unsigned(t) + unsigned(cols));
        std::vector<float> y(std::size_t(p.n * p.rows), NAN);
        gemv_rows(p.w, p.x.data(), n, y.data(), 0, 20);
        gemv_rows(p.w, p.x.data(), n, y.data(), 20, p.rows);
        p.check(y, 0, "gemv");
      }
    }
  }
}

// The float GEMM path runs everywhere; here it is forced, for the types the integer path
// would otherwise take.
TEST(Matmul, FloatGemmPathOfEveryType) {
  for (TensorType t : kAllTypes) {
    const Problem p(t, 45, cols_for(t), 11, 100 + unsigned(t));
    std::vector<float> y(std::size_t(p.n * p.rows), NAN);
    const GemmScratch scratch(gemm_scratch_bytes(p.w, 0));
    for (std::int64_t r0 = 0; r0 < p.rows; r0 += kGemmRowQuantum) {
      GemmTask task;
      task.w = &p.w;
      task.x = p.x.data();
      task.y = y.data();
      task.row_begin = r0;
      task.row_end = std::min(p.rows, r0 + kGemmRowQuantum);
      task.token_begin = 0;
      task.token_end = p.n;
      gemm_rows(task, scratch);
    }
    p.check(y, 0, "float gemm");
  }
}

// y against the same product in float64 with x replaced by its quantized blocks (dx · q): then
// only float rounding separates them, so a wrong code, scale or offset shows.
void expect_exact_on_quantized_activations(const Problem& p, const QuantizedActivations& xq,
                                           const std::vector<float>& y, const std::string& what) {
  const std::int64_t blocks = p.cols / 32;
  std::vector<float> row(static_cast<std::size_t>(p.cols));
  for (std::int64_t r = 0; r < p.rows; ++r) {
    dequantize_row(p.type, p.bytes.data() + row_bytes(p.type, p.cols) * std::size_t(r), p.cols,
                   row.data());
    for (std::int64_t k = 0; k < p.n; ++k) {
      double want = 0.0, scale = 0.0;
      for (std::int64_t b = 0; b < blocks; ++b) {
        const double dx = xq.d[std::size_t(k * blocks + b)];
        double wmax = 0.0, qsum = 0.0;
        for (std::int64_t j = b * 32; j < b * 32 + 32; ++j) {
          const auto at = std::size_t(k * p.cols + j);
          const int q = xq.bits == 8 ? xq.q8[at] : xq.q16[at];
          want += double(row[std::size_t(j)]) * dx * q;
          wmax = std::max(wmax, std::abs(double(row[std::size_t(j)])));
          qsum += std::abs(q);
        }
        scale += dx * wmax * qsum;
      }
      const float got = y[std::size_t(k * p.rows + r)];
      EXPECT_NEAR(got, want, 4e-5 * scale + 1e-6)
          << what << " " << xq.bits << "-bit " << to_string(p.type) << " " << p.rows << "x"
          << p.cols << " n=" << p.n << " token " << k << " row " << r;
    }
  }
}

TEST(Matmul, IntegerGemmIsExactOnQuantizedActivations) {
  if (!integer_gemm_supported(TensorType::q4_1)) GTEST_SKIP() << "no integer GEMM on this CPU";
  for (int bits : {8, 16}) {
    for (TensorType t : {TensorType::q8_0, TensorType::q4_0, TensorType::q4_1, TensorType::q4_k}) {
      const Problem p(t, 45, cols_for(t), 7, 300 + unsigned(t));
      QuantizedActivations xq(bits, p.n, p.cols);
      quantize_activations(p.x.data(), 0, p.n, xq);
      std::vector<float> y(std::size_t(p.n * p.rows), NAN);
      const GemmScratch scratch(gemm_scratch_bytes(p.w, bits));
      for (std::int64_t r0 = 0; r0 < p.rows; r0 += kGemmRowQuantum) {
        GemmTask task;
        task.w = &p.w;
        task.x = p.x.data();
        task.xq = &xq;
        task.y = y.data();
        task.row_begin = r0;
        task.row_end = std::min(p.rows, r0 + kGemmRowQuantum);
        task.token_end = p.n;
        gemm_rows(task, scratch);
      }
      expect_exact_on_quantized_activations(p, xq, y, "gemm");
    }
  }
}

// The integer GEMV (decode with rounded activations) on every SIMD target that has one, and the
// row-group form (VNNI, AVX2), called directly on row ranges that do not start or end on a
// 4-row group (one range of 2 rows inside a tile), for every token count it serves, on short rows
// and rows of 70 blocks.
TEST(Matmul, IntegerGemvIsExactOnQuantizedActivations) {
  int kernels = 0;
  testing::for_each_simd_target([&kernels](std::int64_t bit) {
    HugePageArena arena;
    for (int bits : {8, 16}) {
      for (TensorType t : {TensorType::q8_0, TensorType::q4_0, TensorType::q4_1}) {
        const IntegerGemv kind = integer_gemv(t, bits);
        const bool row_groups = row_group_gemv_supported(t, bits);
        if (kind == IntegerGemv::none) {
          EXPECT_FALSE(row_groups) << to_string(t) << " " << bits;
          continue;
        }
        ++kernels;
        const std::string target = hwy::TargetName(bit);
        for (const std::int64_t cols : {std::int64_t(96), std::int64_t(2240)}) {
          for (std::int64_t n = 1; n <= kGemvMaxTokens; ++n) {
            const Problem p(t, 45, cols, n, 400 + unsigned(t) + unsigned(cols) + unsigned(n));
            QuantizedActivations xq(bits, p.n, p.cols);
            quantize_activations(p.x.data(), 0, p.n, xq);
            if ((kind == IntegerGemv::vnni || row_groups) && bits == 16) split_byte_planes(xq);
            std::vector<float> y(std::size_t(p.n * p.rows), NAN);
            int_gemv_rows(p.w, xq, n, y.data(), 0, 19);
            int_gemv_rows(p.w, xq, n, y.data(), 19, 21);
            int_gemv_rows(p.w, xq, n, y.data(), 21, p.rows);
            expect_exact_on_quantized_activations(p, xq, y, "gemv on " + target);
            if (!row_groups) continue;
            // The same over the row-group copy: whole groups, then a last one of 13 rows.
            const RowGroupWeights groups(p.w, arena);
            std::fill(y.begin(), y.end(), NAN);
            row_group_gemv(groups, xq, n, y.data(), 0, 16);
            row_group_gemv(groups, xq, n, y.data(), 16, p.rows);
            expect_exact_on_quantized_activations(p, xq, y, "row groups on " + target);
          }
        }
      }
    }
    EXPECT_EQ(integer_gemv(TensorType::q4_k, 16), IntegerGemv::none);
    EXPECT_EQ(integer_gemv(TensorType::f16, 16), IntegerGemv::none);
    EXPECT_EQ(integer_gemv(TensorType::q8_0, 8), IntegerGemv::none);
    if (bit == HWY_AVX3_DL) {
      EXPECT_EQ(integer_gemv(TensorType::q4_0, 8), IntegerGemv::vnni);
    }
    if (bit == HWY_AVX2) {
      EXPECT_EQ(integer_gemv(TensorType::q4_1, 8), IntegerGemv::pairs);
    }
    if (bit == HWY_AVX3_DL || bit == HWY_AVX2) {
      for (TensorType t : {TensorType::q8_0, TensorType::q4_0, TensorType::q4_1}) {
        EXPECT_TRUE(row_group_gemv_supported(t, 16))
            << to_string(t) << " on " << hwy::TargetName(bit);
      }
      for (TensorType t : {TensorType::q4_0, TensorType::q4_1}) {
        EXPECT_TRUE(row_group_gemv_supported(t, 8))
            << to_string(t) << " on " << hwy::TargetName(bit);
      }
    }
  });
  if (kernels == 0) GTEST_SKIP() << "no integer GEMV on this CPU";
}

TEST(Matmul, QuantizedActivationsRoundPerBlock) {
  std::mt19937 rng(3);
  const std::int64_t n = 3, cols = 64;
  auto x = random_activations(std::size_t(n * cols), rng);
  x[40] = 0.0f;
  for (int j = 64; j < 96; ++j) x[std::size_t(j)] = 0.0f;  // an all-zero block
  for (int bits : {8, 16}) {
    const double qmax = bits == 8 ? 127.0 : 32767.0;
    QuantizedActivations q(bits, n, cols);
    quantize_activations(x.data(), 0, n, q);
    for (std::int64_t t = 0; t < n; ++t) {
      for (std::int64_t b = 0; b < cols / 32; ++b) {
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) {
          amax = std::max(amax, std::abs(x[std::size_t(t * cols + b * 32 + j)]));
        }
        const float d = q.d[std::size_t(t * 2 + b)];
        EXPECT_FLOAT_EQ(d, float(amax / qmax));
        long sum = 0;
        for (int j = 0; j < 32; ++j) {
          const auto at = std::size_t(t * cols + b * 32 + j);
          const int code = bits == 8 ? q.q8[at] : q.q16[at];
          sum += code;
          EXPECT_LE(std::abs(double(x[at]) - double(d) * code), amax / qmax * 0.5001 + 1e-30)
              << bits << "-bit " << at;
        }
        EXPECT_FLOAT_EQ(q.s[std::size_t(t * 2 + b)], d * float(sum));
      }
    }
  }
}

// Results do not depend on how rows and tokens are split across threads.
TEST(Matmul, SameResultForAnyThreadCount) {
  for (TensorType t : {TensorType::q4_1, TensorType::q8_0, TensorType::q6_k}) {
    for (std::int64_t n : {1, 300}) {
      // Large enough (over 64 KiB of weights) to be split even for one token.
      const Problem p(t, 400, 512, n, 11);
      std::vector<float> one(std::size_t(n * p.rows)), two(one.size()), three(one.size());
      for (auto [threads, y] : {std::pair{1, &one}, {2, &two}, {3, &three}}) {
        CpuCompute compute(threads);
        compute.matmul(in_place(compute, p.w), p.x, n, *y);
      }
      EXPECT_EQ(one, two) << to_string(t) << " n=" << n;
      EXPECT_EQ(one, three) << to_string(t) << " n=" << n;
    }
  }
}

// Every SIMD target this CPU runs gives a correct GEMV and GEMM, not only the best one.
TEST(Matmul, EverySupportedSimdTarget) {
  testing::for_each_simd_target([](std::int64_t bit) {
    for (MatmulActivations mode : {MatmulActivations::int8, MatmulActivations::int16}) {
      CpuCompute compute(2, mode);
      for (TensorType t : kAllTypes) {
        for (std::int64_t n : {1, 21}) {
          const Problem p(t, 40, cols_for(t), n, 5);
          std::vector<float> y(std::size_t(n * p.rows), NAN);
          compute.matmul(in_place(compute, p.w), p.x, n, y);
          p.check(
              y, activation_bits(mode, t, n),
              std::string("target ") + hwy::TargetName(bit) + " mode " + std::to_string(int(mode)));
        }
      }
    }
    if (bit != HWY_AVX3_DL) {
      EXPECT_FALSE(integer_gemm_supported(TensorType::q4_1));
    }
  });
}

template <class F>
void expect_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error, expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// A batch over one input gives, per output, what its own matmul call gives: bit for bit, for
// decode (one GEMV pass over every output's rows, one quantization of x) and for the GEMM, with
// outputs of one type and of mixed types (which cannot share integer activations).
TEST(Matmul, SharedInputEqualsSeparateCalls) {
  const TensorType same[] = {TensorType::q4_1, TensorType::q4_1, TensorType::q4_1};
  const TensorType mixed[] = {TensorType::q4_1, TensorType::f32, TensorType::q8_0};
  for (const auto& types : {same, mixed}) {
    for (MatmulActivations mode : {MatmulActivations::int16, MatmulActivations::f32}) {
      CpuCompute compute(2, mode);
      for (std::int64_t n : {1, 3, 70}) {
        // Row counts that put the split between threads inside an output.
        const std::int64_t rows[] = {576, 190, 66};
        std::vector<Problem> problems;
        for (int i = 0; i < 3; ++i) problems.emplace_back(types[i], rows[i], 576, n, 40 + i);
        std::vector<std::vector<float>> batched, separate;
        std::vector<CpuWeights> weights;
        std::vector<HostMatmulOutput> outputs;
        for (const Problem& p : problems) {
          weights.push_back(in_place(compute, p.w));
          batched.emplace_back(std::size_t(n * p.rows), NAN);
          separate.emplace_back(std::size_t(n * p.rows), NAN);
        }
        for (std::size_t i = 0; i < problems.size(); ++i) {
          outputs.push_back({&weights[i], batched[i]});
          compute.matmul(weights[i], problems[0].x, n, separate[i]);
        }
        compute.matmul_shared_input(problems[0].x, n, outputs);
        problems[0].check(batched[0], activation_bits(mode, types[0], n), "shared input");
        for (std::size_t i = 0; i < problems.size(); ++i) {
          EXPECT_EQ(batched[i], separate[i]) << "output " << i << " " << to_string(types[i])
                                             << " n=" << n << " mode " << int(mode);
        }
      }
    }
  }
}

// CpuCompute::upload copies exactly the matrices the row-group GEMV takes into row groups, and
// those give the reference products for decode and prefill token counts, alone and in a batch
// whose split between the threads falls inside an output's group.
TEST(Matmul, RowGroupCopiesGiveTheReferenceProducts) {
  if (!row_group_gemv_supported(TensorType::q4_1, 16))
    GTEST_SKIP() << "no row-group GEMV on this CPU";
  const CpuCompute compute(2, MatmulActivations::int16);
  for (TensorType t : kAllTypes) {
    const Problem p(t, 40, cols_for(t), 1, 7);
    const bool copied = t == TensorType::q4_0 || t == TensorType::q4_1 || t == TensorType::q8_0;
    EXPECT_EQ(compute.upload_matrix(p.w)->row_groups() != nullptr, copied) << to_string(t);
  }
  EXPECT_EQ(CpuCompute(2, MatmulActivations::int8)
                .upload_matrix(Problem(TensorType::q8_0, 16, 64, 1, 8).w)
                ->row_groups(),
            nullptr);
  EXPECT_EQ(CpuCompute(2, MatmulActivations::int16, false)
                .upload_matrix(Problem(TensorType::q4_1, 16, 64, 1, 8).w)
                ->row_groups(),
            nullptr);

  CpuCompute batch_compute(2, MatmulActivations::int16);
  for (std::int64_t n : {1, 3, 70}) {
    const TensorType types[] = {TensorType::q4_1, TensorType::q8_0, TensorType::q4_0};
    const std::int64_t rows[] = {576, 190, 66};
    std::vector<Problem> problems;
    std::vector<std::unique_ptr<CpuWeights>> uploads;
    std::vector<HostMatmulOutput> outputs;
    std::vector<std::vector<float>> batched, separate;
    for (int i = 0; i < 3; ++i) {
      problems.emplace_back(types[i], rows[i], 576, n, 60 + i);
      uploads.push_back(batch_compute.upload_matrix(problems.back().w));
      batched.emplace_back(std::size_t(n * rows[i]), NAN);
      separate.emplace_back(std::size_t(n * rows[i]), NAN);
    }
    for (std::size_t i = 0; i < 3; ++i) {
      outputs.push_back({uploads[i].get(), batched[i]});
      batch_compute.matmul(*uploads[i], problems[0].x, n, separate[i]);
    }
    batch_compute.matmul_shared_input(problems[0].x, n, outputs);
    problems[0].check(batched[0], 16, "row groups, shared input");
    problems[0].check(separate[0], 16, "row groups");
    for (std::size_t i = 0; i < problems.size(); ++i) {
      EXPECT_EQ(batched[i], separate[i]) << "output " << i << " n=" << n;
    }
  }
}

// Uploaded weights go only to the Compute that made them: another one (with its own activation
// mode, say) would read a row-group copy made for other kernels.
TEST(Matmul, RefusesWeightsUploadedByAnotherCompute) {
  CpuCompute maker(2, MatmulActivations::int16), other(2, MatmulActivations::int16);
  const Problem p(TensorType::q4_1, 32, 64, 1, 12);
  const std::unique_ptr<CpuWeights> uploaded = maker.upload_matrix(p.w);
  std::vector<float> y(std::size_t(p.rows));
  expect_error([&] { other.matmul(*uploaded, p.x, 1, y); },
               "the 32 x 64 weights were uploaded by another Compute");
}

// 16-bit activations whose byte planes were never split are refused, not read past their end.
TEST(Matmul, IntegerGemvRefusesActivationsWithoutBytePlanes) {
  if (!row_group_gemv_supported(TensorType::q4_1, 16))
    GTEST_SKIP() << "no GEMV with byte planes (VNNI, row groups) on this CPU";
  const Problem p(TensorType::q4_1, 8, 64, 1, 9);
  QuantizedActivations xq(16, 1, p.cols);
  quantize_activations(p.x.data(), 0, 1, xq);
  std::vector<float> y(std::size_t(p.rows));
  if (integer_gemv(TensorType::q4_1, 16) == IntegerGemv::vnni) {
    expect_error([&] { int_gemv_rows(p.w, xq, 1, y.data(), 0, p.rows); }, "split_byte_planes");
  }
  HugePageArena arena;
  const RowGroupWeights groups(p.w, arena);
  expect_error([&] { row_group_gemv(groups, xq, 1, y.data(), 0, p.rows); }, "split_byte_planes");
  expect_error([&] { RowGroupWeights(Problem(TensorType::q4_k, 8, 256, 1, 9).w, arena); },
               "not q4_k");
}

// Copies are carved in order out of shared blocks: each aligned, none overlapping another, a
// large one in a block of its own, and all still readable after the arena is gone.
TEST(HugePageArena, AllocationsAreAlignedDisjointAndOutliveTheArena) {
  std::vector<std::pair<std::shared_ptr<std::uint8_t>, std::size_t>> kept;
  {
    HugePageArena arena;
    for (const std::size_t bytes : {std::size_t(100), std::size_t(64), std::size_t(3) << 20,
                                    std::size_t(1), std::size_t(40) << 20, std::size_t(7000)}) {
      kept.emplace_back(arena.allocate(bytes), bytes);
    }
  }
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const auto& [p, bytes] = kept[i];
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.get()) % 64, 0u) << i;
    std::memset(p.get(), int(i + 1), bytes);
  }
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const auto& [p, bytes] = kept[i];
    EXPECT_EQ(std::count(p.get(), p.get() + bytes, std::uint8_t(i + 1)), std::ptrdiff_t(bytes))
        << i;
  }
}

// The VmFlags line of /proc/self/smaps for the mapping that holds p ("" if none does).
std::string vm_flags_at(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &begin, &end) == 2 &&
        line.find(' ') > line.find('-')) {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool huge_page_advice_is_recorded(const void* p) {
  return vm_flags_at(p).find(" hg") != std::string::npos;
}

// Whether madvise(MADV_HUGEPAGE) shows in /proc/self/smaps here: the kernel records it whatever
// its huge page setting, but qemu-user (the aarch64 test run) accepts the call and drops it.
bool madvise_is_recorded() {
  const std::size_t bytes = 2 * kHugePage;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  const bool recorded = madvise(p, bytes, MADV_HUGEPAGE) == 0 && huge_page_advice_is_recorded(p);
  munmap(p, bytes);
  return recorded;
}

// A large block (a KV cache's segments or tail, an arena block) is advised for huge pages on its
// whole 2 MiB pages, and the partial pages at its ends are left alone.
TEST(HugePages, AdviceCoversTheWholeHugePagesInside) {
  if (!madvise_is_recorded()) GTEST_SKIP() << "madvise advice is not recorded in smaps here";
  const std::size_t bytes = 7 * kHugePage + 12345;
  auto block = hwy::AllocateAligned<std::uint8_t>(bytes);
  ASSERT_TRUE(block);
  advise_huge_pages(block.get(), bytes);
  const auto begin = reinterpret_cast<std::uintptr_t>(block.get());
  const std::uintptr_t first_whole = (begin + kHugePage - 1) / kHugePage * kHugePage;
  const auto advised = [](std::uintptr_t at) {
    return huge_page_advice_is_recorded(reinterpret_cast<const void*>(at));
  };
  EXPECT_TRUE(advised(first_whole)) << vm_flags_at(reinterpret_cast<const void*>(first_whole));
  EXPECT_TRUE(advised(first_whole + 5 * kHugePage));
  if (first_whole > begin) {
    EXPECT_FALSE(advised(begin));
  }
}

TEST(Matmul, SharedInputErrorsNameTheOutput) {
  CpuCompute compute(1);
  Bytes b(row_bytes(TensorType::q4_1, 64) * 3);
  const WeightView w{TensorType::q4_1, b.data(), 3, 64};
  std::vector<float> x(64), y0(3), y1(2);
  const CpuWeights weights = in_place(compute, w);
  const HostMatmulOutput outputs[] = {{&weights, y0}, {&weights, y1}};
  expect_error([&] { compute.matmul_shared_input(x, 1, outputs); },
               "matmul_shared_input: y has 2 elements, expected n * rows = 1 * 3 = 3 (output 1)");
}

TEST(Matmul, ShapeErrorsNameTheOperand) {
  CpuCompute compute(1);
  Bytes b(row_bytes(TensorType::q4_1, 64) * 3);
  const WeightView w{TensorType::q4_1, b.data(), 3, 64};
  std::vector<float> x(128), y(6);
  const CpuWeights weights = in_place(compute, w);
  expect_error([&] { compute.matmul(weights, std::span(x).first(100), 2, y); },
               "x has 100 elements");
  expect_error([&] { compute.matmul(weights, x, 2, std::span(y).first(5)); }, "y has 5 elements");
  expect_error(
      [&] {
        compute.upload_matrix({TensorType::q4_1, b.data(), 3, 40});
      },
      "not a whole number of 32-element blocks");
  expect_error([&] { compute.upload_matrix({TensorType::q4_1, nullptr, 3, 64}); }, "empty weights");
}

// ---- embedding and elementwise ops --------------------------------------------------------

TEST(Embedding, RowsOfTheTable) {
  std::mt19937 rng(9);
  const std::int64_t vocab = 50, dim = 64;
  const Bytes table = random_weights(TensorType::q8_0, vocab, dim, rng);
  const WeightView w{TensorType::q8_0, table.data(), vocab, dim};
  const std::vector<std::int32_t> ids = {3, 0, 49, 3};
  std::vector<float> out(ids.size() * dim);
  CpuCompute(2).embedding(w, ids, out);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto row = dequantize(
        TensorType::q8_0,
        Bytes(
            table.begin() + std::ptrdiff_t(row_bytes(TensorType::q8_0, dim) * std::size_t(ids[i])),
            table.begin() +
                std::ptrdiff_t(row_bytes(TensorType::q8_0, dim) * std::size_t(ids[i] + 1))),
        dim);
    for (std::int64_t j = 0; j < dim; ++j)
      EXPECT_EQ(out[i * dim + std::size_t(j)], row[std::size_t(j)]);
  }
  const std::vector<std::int32_t> bad = {1, 50};
  expect_error([&] { CpuCompute(1).embedding(w, bad, std::span(out).first(2 * dim)); },
               "id 50 at position 1");
}

TEST(RmsNorm, MatchesDefinition) {
  std::mt19937 rng(4);
  for (std::int64_t dim : {37, 576}) {
    const std::int64_t rows = 70;
    const auto x = random_activations(std::size_t(rows * dim), rng);
    const auto weight = random_activations(std::size_t(dim), rng);
    std::vector<float> out(x.size());
    CpuCompute(2).rms_norm(x, weight, 1e-5f, out);
    for (std::int64_t r = 0; r < rows; ++r) {
      double ss = 0.0;
      for (std::int64_t j = 0; j < dim; ++j)
        ss += double(x[std::size_t(r * dim + j)]) * x[std::size_t(r * dim + j)];
      const double scale = 1.0 / std::sqrt(ss / double(dim) + 1e-5);
      for (std::int64_t j = 0; j < dim; ++j) {
        const auto at = std::size_t(r * dim + j);
        const double want = x[at] * scale * weight[std::size_t(j)];
        EXPECT_NEAR(out[at], want, 1e-5 * (std::abs(want) + 1e-3)) << r << " " << j;
      }
    }
    std::vector<float> in_place = x;
    CpuCompute(1).rms_norm(in_place, weight, 1e-5f, in_place);
    EXPECT_EQ(in_place, out);
  }
  std::vector<float> x(10), w(4), out(10);
  expect_error([&] { CpuCompute(1).rms_norm(x, w, 1e-5f, out); }, "not a whole number of rows");
}

// The rotation of a position is kept between calls (a decode step rotates one position in every
// layer): calls that change the base, the head size or the style, and repeated positions, must
// not reuse a stale one.
TEST(Rope, RotatesEachStylesPairs) {
  std::mt19937 rng(6);
  const std::tuple<int, float, RopeStyle> settings[] = {{64, 10000.0f, RopeStyle::adjacent_pairs},
                                                        {64, 500000.0f, RopeStyle::adjacent_pairs},
                                                        {6, 10000.0f, RopeStyle::adjacent_pairs},
                                                        {64, 10000.0f, RopeStyle::halves},
                                                        {128, 1e6f, RopeStyle::halves},
                                                        {6, 10000.0f, RopeStyle::halves},
                                                        {64, 10000.0f, RopeStyle::adjacent_pairs}};
  for (const auto& [head_dim, base, style] : settings) {
    const int n_heads = 3;
    const std::vector<std::int32_t> positions = {100000, 0, 1, 7, 7, 513, 8191, 100000};
    const auto n = std::int64_t(positions.size());
    const auto x = random_activations(std::size_t(n * n_heads * head_dim), rng);
    std::vector<float> y = x;
    CpuCompute(2).rope(y, positions, n_heads, head_dim, base, style);
    const std::vector<double> want =
        testing::rope_reference(x, positions, n_heads, head_dim, base, style);
    for (std::int64_t t = 0; t < n; ++t) {
      for (int h = 0; h < n_heads; ++h) {
        const auto head = std::size_t((t * n_heads + h) * head_dim);
        for (int i = 0; i < head_dim / 2; ++i) {
          const auto [a, b] = testing::rope_pair(style, head_dim, i);
          const double tol = 2e-6 * (std::abs(x[head + a]) + std::abs(x[head + b])) + 1e-7;
          EXPECT_NEAR(y[head + a], want[head + a], tol) << head_dim << " " << t << " " << i;
          EXPECT_NEAR(y[head + b], want[head + b], tol) << head_dim << " " << t << " " << i;
        }
      }
    }
  }
  std::vector<float> x(12);
  const std::vector<std::int32_t> pos = {0};
  expect_error([&] { CpuCompute(1).rope(x, pos, 2, 4, 10000.0f, RopeStyle::halves); },
               "x has 12 elements");
  expect_error([&] { CpuCompute(1).rope(x, pos, 2, 5, 10000.0f, RopeStyle::halves); },
               "even head_dim");
}

TEST(Elementwise, SiluMulAndAdd) {
  std::mt19937 rng(8);
  for (std::size_t count : {std::size_t(13), std::size_t(100003)}) {
    auto gate = random_activations(count, rng);
    gate[0] = -100.0f;
    gate[1] = 90.0f;
    const auto up = random_activations(count, rng);
    auto out = gate;
    CpuCompute(2).silu_mul(out, up);
    for (std::size_t i = 0; i < count; ++i) {
      const double g = gate[i];
      const double want = g / (1.0 + std::exp(-g)) * up[i];
      ASSERT_NEAR(out[i], want, 4e-6 * std::abs(want) + 1e-30) << i;
    }
    auto sum = gate;
    CpuCompute(2).add(sum, up);
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(sum[i], gate[i] + up[i]) << i;
  }
  std::vector<float> a(4), b(5);
  expect_error([&] { CpuCompute(1).add(a, b); }, "y has 5 elements");
  expect_error([&] { CpuCompute(1).silu_mul(a, b); }, "up has 5 elements");
}

// ---- the encoder ops -----------------------------------------------------------------------

TEST(LayerNorm, MatchesDefinition) {
  std::mt19937 rng(12);
  for (std::int64_t dim : {37, 384}) {
    const std::int64_t rows = 70;
    auto x = random_activations(std::size_t(rows * dim), rng);
    // A row far from zero, where E[x²] - mean² would lose the variance.
    for (std::int64_t j = 0; j < dim; ++j) x[std::size_t(dim + j)] += 1000.0f;
    const auto weight = random_activations(std::size_t(dim), rng);
    const auto bias = random_activations(std::size_t(dim), rng);
    std::vector<float> out(x.size());
    CpuCompute(2).layer_norm(x, weight, bias, 1e-12f, out);
    const testing::LayerNormReference ref =
        testing::layer_norm_reference(x, dim, weight, bias, 1e-12);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t j = 0; j < dim; ++j) {
        const auto at = std::size_t(r * dim + j);
        // Row 1's inputs carry float rounding of 1000 + x, about 6e-5 relative to its spread.
        const double tol = ref.tolerance(at, weight[std::size_t(j)], r == 1 ? 2e-3 : 1e-5);
        ASSERT_NEAR(out[at], ref.want[at], tol) << r << " " << j;
      }
    }
    std::vector<float> in_place = x;
    CpuCompute(1).layer_norm(in_place, weight, bias, 1e-12f, in_place);
    EXPECT_EQ(in_place, out);
  }
  std::vector<float> x(8), w(4), b(3), out(8);
  expect_error([&] { CpuCompute(1).layer_norm(x, w, b, 1e-5f, out); }, "bias has 3 elements");
  expect_error([&] { CpuCompute(1).layer_norm(x, b, b, 1e-5f, out); },
               "not a whole number of rows");
  expect_error([&] { CpuCompute(1).layer_norm(x, w, w, 1e-5f, std::span(out).first(4)); },
               "out has 4 elements");
}

TEST(Gelu, MatchesTheErfForm) {
  std::mt19937 rng(13);
  for (std::size_t count : {std::size_t(13), std::size_t(100003)}) {
    auto x = random_activations(count, rng);
    // The tails: GELU of large negative inputs is tiny and must keep its relative precision.
    const float edges[] = {-30.0f, -9.0f, -5.5f, -3.0f, -1e-3f, 0.0f, 1e-3f, 3.0f, 9.0f, 30.0f};
    std::copy(std::begin(edges), std::end(edges), x.begin());
    auto y = x;
    CpuCompute(2).gelu(y);
    for (std::size_t i = 0; i < count; ++i) {
      const double v = x[i];
      const double want = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
      // exp(-x²/2) inside erfc inherits the float rounding of x²: relative error ~ x² ulp.
      ASSERT_NEAR(y[i], want, (1e-6 + 2e-7 * v * v) * std::abs(want) + 1e-38) << "x = " << v;
    }
  }
}

TEST(AddBias, EveryRow) {
  std::mt19937 rng(14);
  const std::int64_t rows = 50, dim = 37;
  const auto x = random_activations(std::size_t(rows * dim), rng);
  const auto bias = random_activations(std::size_t(dim), rng);
  auto y = x;
  CpuCompute(2).add_bias(y, bias);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i] + bias[i % std::size_t(dim)]);
  std::vector<float> z(10);
  expect_error([&] { CpuCompute(1).add_bias(z, std::span(bias).first(4)); },
               "not a whole number of rows of bias's 4");
}

// Softmax attention of every token over its own sequence, in float64.
std::vector<double> encoder_attention_reference(const std::vector<float>& q,
                                                const std::vector<float>& k,
                                                const std::vector<float>& v,
                                                const std::vector<std::int64_t>& lengths,
                                                int n_heads, int head_dim, double scale) {
  const std::int64_t stride = std::int64_t(n_heads) * head_dim;
  std::vector<double> out(q.size());
  std::int64_t first = 0;
  for (const std::int64_t length : lengths) {
    for (int h = 0; h < n_heads; ++h) {
      for (std::int64_t i = first; i < first + length; ++i) {
        std::vector<double> p(static_cast<std::size_t>(length));
        double max = -INFINITY, sum = 0.0;
        for (std::int64_t j = 0; j < length; ++j) {
          double dot = 0.0;
          for (int d = 0; d < head_dim; ++d) {
            dot += double(q[std::size_t(i * stride + h * head_dim + d)]) *
                   k[std::size_t((first + j) * stride + h * head_dim + d)];
          }
          p[std::size_t(j)] = scale * dot;
          max = std::max(max, p[std::size_t(j)]);
        }
        for (double& x : p) sum += (x = std::exp(x - max));
        for (int d = 0; d < head_dim; ++d) {
          double acc = 0.0;
          for (std::int64_t j = 0; j < length; ++j) {
            acc += p[std::size_t(j)] * v[std::size_t((first + j) * stride + h * head_dim + d)];
          }
          out[std::size_t(i * stride + h * head_dim + d)] = acc / sum;
        }
      }
    }
    first += length;
  }
  return out;
}

TEST(EncoderAttention, EachTokenSeesItsOwnSequence) {
  std::mt19937 rng(15);
  // head_dim 32 (MiniLM) and 6 (a scalar tail); lengths from 1 to past a padded key row.
  for (int head_dim : {32, 6}) {
    const int n_heads = 3;
    const std::vector<std::int64_t> lengths = {5, 1, 33, 17, 70};
    const std::int64_t tokens = std::accumulate(lengths.begin(), lengths.end(), std::int64_t(0));
    const auto size = std::size_t(tokens * n_heads * head_dim);
    const auto q = random_activations(size, rng);
    const auto k = random_activations(size, rng);
    const auto v = random_activations(size, rng);
    const double scale = 1.0 / std::sqrt(double(head_dim));
    const auto want = encoder_attention_reference(q, k, v, lengths, n_heads, head_dim, scale);
    for (int threads : {1, 2}) {
      std::vector<float> out(size, NAN);
      CpuCompute(threads).encoder_attention(q, k, v, lengths, n_heads, head_dim, float(scale), out);
      for (std::size_t i = 0; i < size; ++i) {
        ASSERT_NEAR(out[i], want[i], 2e-5 * (std::abs(want[i]) + 1.0)) << head_dim << " " << i;
      }
    }
  }
  std::vector<float> x(2 * 2 * 4);
  const std::vector<std::int64_t> too_many = {3};
  const std::vector<std::int64_t> empty_sequence = {2, 0};
  expect_error([&] { CpuCompute(1).encoder_attention(x, x, x, too_many, 2, 4, 1.0f, x); },
               "q has 16 elements");
  expect_error([&] { CpuCompute(1).encoder_attention(x, x, x, empty_sequence, 2, 4, 1.0f, x); },
               "sequence 1 has length 0");
}

}  // namespace
}  // namespace cocktail::cpu
