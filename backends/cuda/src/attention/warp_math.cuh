#pragma once

// Reductions over a group of kLanes lanes, and the few float conversions the attention kernels
// share.

#include <cstdint>
#include <cstring>
#include <limits>

#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

inline constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
inline constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float lanes_sum(float v) {
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2) {
    v += __shfl_xor_sync(kFullMask, v, offset, kLanes);
  }
  return v;
}

__device__ __forceinline__ float lanes_max(float v) {
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset, kLanes));
  }
  return v;
}

// The reference point of an online-softmax step whose new maximum is m: m itself, or 0 while
// nothing has been seen (m = -inf), so that 2^(x - base) is 0 for x = -inf and never NaN.
__device__ __forceinline__ float softmax_base(float m) {
  return m == kMinusInfinity ? 0.0f : m;
}

// The FP16 at p (2-byte aligned) as a float.
__device__ __forceinline__ float half_at(const unsigned char* p) {
  return __half2float(*reinterpret_cast<const __half*>(p));
}

// The two FP16 in a 32-bit word (low half first) as floats.
__device__ __forceinline__ float2 halves_of(unsigned bits) {
  __half2 h;
  std::memcpy(&h, &bits, sizeof h);
  return __half22float2(h);
}

// Byte k (0..3) of `word` as a float: the byte becomes the low mantissa bits of 2^23, which the
// subtraction takes away again. Exact for 0..255, and one byte permute and one add, where a
// conversion instruction runs at a fraction of the rate.
__device__ __forceinline__ float byte_value(unsigned word, int k) {
  return __int_as_float(int(__byte_perm(word, 0x4B000000u, 0x7440u | unsigned(k)))) - 8388608.0f;
}

}  // namespace cocktail::gpu
