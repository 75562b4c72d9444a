#pragma once

// Quantizing one block (gpu_common/tile_format.hpp) on the device, by every thread of a thread
// block: the commit's gather kernel and the quantizer's pack kernel both run this, so the quantizer
// the conformance suite checks is the code that commits do. The arithmetic is the CPU
// quantizer's (backends/cpu/src/quant/quantizer.cpp), operation for operation, with the _rn
// intrinsics where the compiler could otherwise fuse a multiply and an add:
//  - integers: scale (max − min)/(2^b − 1) and zero min, rounded to FP16, codes from those
//    rounded values, clamp((x − zero)/scale) rounded half to even (a zero scale gives code 0);
//    RangeFit::least_squares refits the range of INT4 and INT2 groups first;
//  - NF4: the absmax rounded to FP16, the code the number of level midpoints below x/absmax;
//  - FP16: x rounded to nearest even.
// A non-finite value, or an FP16 value, zero, scale or absmax that overflows, is recorded in
// the QuantizeFault at the element's (or the group's first element's) site.
//
// A Source gives the block's values and their sites:
//   __device__ float operator()(int token, int channel) const;
//   __device__ unsigned long long site(int token, int channel) const;

#include <cstddef>
#include <cstdint>

#include "gpu_common/tile_format.hpp"
#include "kv/tile_codes.cuh"
#include "quant/quantize_fault.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

__device__ inline void record_fault(unsigned long long* slot, unsigned long long site) {
  atomicMin(slot, site);
}

__device__ inline std::uint16_t half_bits_rn(float x) {
  const __half_raw raw = __float2half_rn(x);
  return raw.x;
}

// An FP16 whose exponent bits are all set: infinite or NaN.
__device__ inline bool half_overflows(std::uint16_t bits) {
  return (bits & 0x7c00u) == 0x7c00u;
}

__device__ inline float max_code_of(Precision p) {
  return float((1 << precision_bits(p)) - 1);
}

__device__ inline std::uint16_t* half_part(std::byte* block, std::size_t offset) {
  return reinterpret_cast<std::uint16_t*>(block + offset);
}

struct GroupRange {
  float lo = 0.0f;
  float hi = 0.0f;
};

template <class Source>
__device__ GroupRange group_range(const Source& src, const GroupSpan& g, QuantizeFault* fault) {
  GroupRange r{INFINITY, -INFINITY};
  for (int i = 0; i < g.length; ++i) {
    const int t = g.token_at(i);
    const int c = g.channel_at(i);
    const float x = src(t, c);
    if (!isfinite(x)) record_fault(&fault->non_finite, src.site(t, c));
    r.lo = fminf(r.lo, x);
    r.hi = fmaxf(r.hi, x);
  }
  return r;
}

// clamp((x − zero)/divisor, 0, max_code) rounded half to even.
__device__ inline float integer_code(float x, float zero, float divisor, float max_code) {
  const float q = __fdiv_rn(__fsub_rn(x, zero), divisor);
  return rintf(fminf(fmaxf(q, 0.0f), max_code));
}

// Sums over a group's values x and their codes q that the least-squares refit needs.
struct FitSums {
  double q = 0, qq = 0, x = 0, xq = 0;
};

// One pass of the fit: codes under (scale, zero), their sums, and their squared error.
template <class Source>
__device__ double assign_codes(const Source& src, const GroupSpan& g, float scale, float zero,
                               float max_code, FitSums& sums) {
  double error = 0;
  FitSums s;
  for (int i = 0; i < g.length; ++i) {
    const float x = src(g.token_at(i), g.channel_at(i));
    const float q = integer_code(x, zero, scale, max_code);
    const double d =
        __dsub_rn(__dadd_rn(__dmul_rn(double(scale), double(q)), double(zero)), double(x));
    error = __dadd_rn(error, __dmul_rn(d, d));
    s.q = __dadd_rn(s.q, double(q));
    s.qq = __dadd_rn(s.qq, __dmul_rn(double(q), double(q)));
    s.x = __dadd_rn(s.x, double(x));
    s.xq = __dadd_rn(s.xq, __dmul_rn(double(x), double(q)));
  }
  sums = s;
  return error;
}

// Refines [lo, hi] to the least-squares fit: codes under the current scale and zero, then scale
// and zero refit to them, for as long as the squared error falls (at most four rounds).
template <class Source>
__device__ void fit_least_squares(const Source& src, const GroupSpan& g, float max_code,
                                  GroupRange& range) {
  constexpr int kMaxRounds = 4;
  float scale = __fdiv_rn(__fsub_rn(range.hi, range.lo), max_code);
  float zero = range.lo;
  if (!(scale > 0)) return;
  const auto n = double(g.length);
  FitSums sums;
  double best = assign_codes(src, g, scale, zero, max_code, sums);
  for (int round = 0; round < kMaxRounds; ++round) {
    const double det = __dsub_rn(__dmul_rn(n, sums.qq), __dmul_rn(sums.q, sums.q));
    if (!(det > 0)) break;  // every value on one code: nothing to refit
    const auto next_scale =
        float(__ddiv_rn(__dsub_rn(__dmul_rn(n, sums.xq), __dmul_rn(sums.q, sums.x)), det));
    const auto next_zero =
        float(__ddiv_rn(__dsub_rn(sums.x, __dmul_rn(double(next_scale), sums.q)), n));
    if (!(next_scale > 0)) break;
    FitSums next_sums;
    const double error = assign_codes(src, g, next_scale, next_zero, max_code, next_sums);
    if (!(error < best)) break;
    best = error;
    scale = next_scale;
    zero = next_zero;
    sums = next_sums;
  }
  range.lo = zero;
  range.hi = __fadd_rn(zero, __fmul_rn(max_code, scale));
}

// Works out group g's constants and stores them, as rounded to FP16, into the block.
template <class Source>
__device__ void fit_group(const BlockFormat& f, RangeFit fit, const Source& src, std::size_t g,
                          std::byte* block, QuantizeFault* fault) {
  const GroupSpan span = f.group(g);
  GroupRange range = group_range(src, span, fault);
  const unsigned long long origin = src.site(span.token, span.channel);
  if (f.precision == Precision::nf4) {
    const std::uint16_t absmax = half_bits_rn(fmaxf(-range.lo, range.hi));
    if (half_overflows(absmax)) record_fault(&fault->beyond_half, origin);
    half_part(block, f.scales_offset())[g] = absmax;
    return;
  }
  const float max_code = max_code_of(f.precision);
  if (fit == RangeFit::least_squares && f.bits() <= 4) {
    fit_least_squares(src, span, max_code, range);
  }
  const std::uint16_t zero = half_bits_rn(range.lo);
  const std::uint16_t scale = half_bits_rn(__fdiv_rn(__fsub_rn(range.hi, range.lo), max_code));
  if (half_overflows(zero) || half_overflows(scale)) record_fault(&fault->beyond_half, origin);
  half_part(block, f.scales_offset())[g] = scale;
  half_part(block, f.zeros_offset())[g] = zero;
}

// The code of x at (token, channel), from the group constants already in the block.
__device__ inline unsigned encode(const BlockFormat& f, const std::byte* block, float x, int token,
                                  int channel) {
  const float scale = read_scale(f, block, token, channel);
  const float divisor = scale > 0 ? scale : INFINITY;
  if (f.precision == Precision::nf4) {
    const float q = __fdiv_rn(x, divisor);
    unsigned code = 0;
    for (unsigned i = 0; i + 1 < 16; ++i) {
      code += q > __fdiv_rn(__fadd_rn(nf4_level(i), nf4_level(i + 1)), 2.0f) ? 1u : 0u;
    }
    return code;
  }
  return unsigned(
      integer_code(x, read_zero(f, block, token, channel), divisor, max_code_of(f.precision)));
}

template <class Source>
__device__ void store_halves(const BlockFormat& f, const Source& src, std::byte* block,
                             QuantizeFault* fault) {
  const std::size_t n = std::size_t(f.tokens) * std::size_t(f.head_dim);
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) {
    const int t = int(i / std::size_t(f.head_dim));
    const int c = int(i % std::size_t(f.head_dim));
    const float x = src(t, c);
    if (!isfinite(x)) record_fault(&fault->non_finite, src.site(t, c));
    const std::uint16_t bits = half_bits_rn(x);
    if (half_overflows(bits)) record_fault(&fault->beyond_half, src.site(t, c));
    *reinterpret_cast<std::uint16_t*>(block + f.code_slot(t, c).byte) = bits;
  }
}

// INT8 and the planar units: each thread makes whole bytes, so no two threads share one.
template <class Source>
__device__ void store_codes(const BlockFormat& f, const Source& src, std::byte* block) {
  const auto row_bytes = int(f.row_bytes());
  const int per_byte = 8 / f.bits();
  const std::size_t n = std::size_t(f.tokens) * std::size_t(row_bytes);
  auto* codes = reinterpret_cast<unsigned char*>(block);
  for (std::size_t b = threadIdx.x; b < n; b += blockDim.x) {
    const int t = int(b / std::size_t(row_bytes));
    const int row_byte = int(b % std::size_t(row_bytes));
    unsigned byte = 0;
    for (int m = 0; m < per_byte; ++m) {
      const int c = f.slot_channel(row_byte, m);
      byte |= encode(f, block, src(t, c), t, c) << unsigned(m * f.bits());
    }
    codes[b] = static_cast<unsigned char>(byte);
  }
}

// Quantizes the block `src` gives into `block`, whose padding the caller has zeroed. Every
// thread of the thread block must call it (it synchronises them).
template <class Source>
__device__ void quantize_block(const BlockFormat& f, RangeFit fit, const Source& src,
                               std::byte* block, QuantizeFault* fault) {
  if (f.precision == Precision::fp16) {
    store_halves(f, src, block, fault);
    return;
  }
  for (std::size_t g = threadIdx.x; g < f.n_scales(); g += blockDim.x) {
    fit_group(f, fit, src, g, block, fault);
  }
  __syncthreads();  // the codes read every group's constants back from the block
  store_codes(f, src, block);
}

}  // namespace cocktail::gpu
