#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "cocktail/tensor_type.hpp"

namespace cocktail {

// IEEE binary16 and bfloat16 bit patterns to float (exact: every value is representable).
// Bit arithmetic rather than a _Float16 cast, which GCC 12 lowers to a library call.
inline float f32_from_f16(std::uint16_t bits) {
  const std::uint32_t sign = std::uint32_t(bits & 0x8000) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1F;
  const std::uint32_t mantissa = bits & 0x3FF;
  if (exponent == 0) {  // zero or subnormal: mantissa · 2^-24
    const float magnitude = float(mantissa) * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  // Rebias the exponent (15 to 127); infinities and NaNs keep the all-ones exponent.
  const std::uint32_t e = exponent == 0x1F ? 0xFF : exponent + 112;
  return std::bit_cast<float>(sign | e << 23 | mantissa << 13);
}

inline float f32_from_bf16(std::uint16_t bits) {
  return std::bit_cast<float>(std::uint32_t(bits) << 16);
}

// Q4_K keeps eight 6-bit scales and eight 6-bit mins in 12 bytes: sub-blocks 0-3 in the low
// 6 bits of bytes 0-3 (scales) and 4-7 (mins); sub-blocks 4-7 take their low 4 bits from
// bytes 8-11 (scale in the low nibble, min in the high one) and their top 2 bits from bits 6-7
// of bytes 0-3 (scales) and 4-7 (mins). Returns {scale, min} of sub-block j (0-7).
constexpr std::pair<int, int> q4_k_scale_min(const std::uint8_t* scales, int j) {
  if (j < 4) return {scales[j] & 63, scales[j + 4] & 63};
  return {(scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4),
          (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4)};
}

// The scalar reference dequantizer: decodes `elements` consecutive elements of a row stored
// as `type` (ggml's block layouts, little-endian) into out[0, elements). Models use it for
// single rows (embedding lookups); tests use it as the ground truth of the fast kernels.
// Throws Error when `elements` is negative or not a whole number of the type's blocks.
void dequantize_row(TensorType type, const std::byte* row, std::int64_t elements, float* out);

}  // namespace cocktail
