#pragma once

// One 16-byte unit of a device weight row (gpu_common/weight_layout.hpp) decoded to floats: the
// kernels' code, compiled for the host as well, so that the CPU tests check it against
// dequantize_row on any machine.

#include <bit>
#include <cmath>
#include <cstdint>

#include "cocktail/dequantize.hpp"
#include "gpu_common/weight_layout.hpp"

// The device intrinsics below, from the vendor's own header (a CUDA or HIP build of
// backends/cuda includes its runtime before this).
#if defined(__HIPCC__)
#include <hip/hip_fp16.h>
#elif defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace cocktail::gpu {

// A unit as four little-endian 32-bit words (a uint4 load on the device).
struct UnitWords {
  std::uint32_t w[4];
};

COCKTAIL_HOST_DEVICE inline float float_from_bits(std::uint32_t bits) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __uint_as_float(bits);
#else
  return std::bit_cast<float>(bits);
#endif
}

COCKTAIL_HOST_DEVICE inline float float_from_f16_bits(std::uint32_t bits) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
#else
  return f32_from_f16(static_cast<std::uint16_t>(bits));
#endif
}

// v − bias, for v < 2^23, without an integer-to-float conversion (a slow instruction on the
// device, where a GEMV decodes a code per weight): the float 2^23 + v has v for its mantissa
// bits, and subtracting 2^23 + bias is exact.
COCKTAIL_HOST_DEVICE inline float code_value(std::uint32_t v, float bias) {
  return float_from_bits(0x4B000000u | v) - (8388608.0f + bias);
}

// Element e (0 <= e < unit_elements(F)) of the unit; `group` is read by the codes formats only.
// Kernels unroll their loops over e, so the shifts are constants.
template <WeightFormat F>
COCKTAIL_HOST_DEVICE inline float decode_element(const UnitWords& u, CodeGroup group, int e) {
  if constexpr (F == WeightFormat::f32) {
    return float_from_bits(u.w[e]);
  } else if constexpr (F == WeightFormat::f16) {
    return float_from_f16_bits((u.w[e / 2] >> (16 * (e % 2))) & 0xFFFFu);
  } else if constexpr (F == WeightFormat::bf16) {
    return float_from_bits(((u.w[e / 2] >> (16 * (e % 2))) & 0xFFFFu) << 16);
  } else if constexpr (F == WeightFormat::codes8) {
    // The signed byte, offset by 128 into 0..255.
    const std::uint32_t biased = ((u.w[e / 4] >> (8 * (e % 4))) & 0xFFu) ^ 0x80u;
    return fmaf(group.scale, code_value(biased, 128.0f), group.offset);
  } else {
    const std::uint32_t code = (u.w[(e % 16) / 4] >> (8 * (e % 4) + 4 * (e / 16))) & 0xFu;
    return fmaf(group.scale, code_value(code, 0.0f), group.offset);
  }
}

}  // namespace cocktail::gpu
