#pragma once

// Element-wise access to a packed block (gpu_common/tile_format.hpp): one code, one scale, one
// zero, one dequantized value. Host and device share these, so the commit's requantization, the
// quantizer's unpack and the store's snapshot decode alike, bit for bit. Kernels that stream
// whole rows read the units themselves; these are the definition they must agree with.

#include <cstddef>
#include <cstdint>

#include "cocktail/quant_spec.hpp"
#include "gpu_common/tile_format.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

COCKTAIL_HOST_DEVICE inline float float_from_half_bits(std::uint16_t bits) {
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

// NF4 level `code` (0..15).
COCKTAIL_HOST_DEVICE inline float nf4_level(unsigned code) {
  constexpr float kLevels[16] = {kNf4Levels[0],  kNf4Levels[1],  kNf4Levels[2],  kNf4Levels[3],
                                 kNf4Levels[4],  kNf4Levels[5],  kNf4Levels[6],  kNf4Levels[7],
                                 kNf4Levels[8],  kNf4Levels[9],  kNf4Levels[10], kNf4Levels[11],
                                 kNf4Levels[12], kNf4Levels[13], kNf4Levels[14], kNf4Levels[15]};
  return kLevels[code & 15u];
}

COCKTAIL_HOST_DEVICE inline const unsigned char* block_bytes(const std::byte* block) {
  return reinterpret_cast<const unsigned char*>(block);
}

// The FP16 at half index `index` of the part starting `offset` bytes into the block (aligned
// to 2 bytes, as every part is).
COCKTAIL_HOST_DEVICE inline std::uint16_t read_half_bits(const std::byte* block, std::size_t offset,
                                                         std::size_t index) {
  return reinterpret_cast<const std::uint16_t*>(block_bytes(block) + offset)[index];
}

// The raw code of (token, channel): an FP16 block's half bits, else the integer code.
COCKTAIL_HOST_DEVICE inline unsigned read_code(const BlockFormat& f, const std::byte* block,
                                               int token, int channel) {
  const CodeSlot slot = f.code_slot(token, channel);
  if (f.precision == Precision::fp16) return read_half_bits(block, slot.byte, 0);
  const unsigned byte = block_bytes(block)[slot.byte];
  if (f.precision == Precision::int8) return byte;
  return (byte >> unsigned(slot.shift)) & ((1u << unsigned(f.bits())) - 1u);
}

// The scale (NF4: the absmax) of the group holding (token, channel); not for FP16 blocks.
COCKTAIL_HOST_DEVICE inline float read_scale(const BlockFormat& f, const std::byte* block,
                                             int token, int channel) {
  return float_from_half_bits(
      read_half_bits(block, f.scales_offset(), f.scale_index(token, channel)));
}

// The zero of the group holding (token, channel): 0 for NF4; not for FP16 blocks.
COCKTAIL_HOST_DEVICE inline float read_zero(const BlockFormat& f, const std::byte* block, int token,
                                            int channel) {
  if (!f.has_zeros()) return 0.0f;
  return float_from_half_bits(
      read_half_bits(block, f.zeros_offset(), f.scale_index(token, channel)));
}

// A code's value under its group's constants (integers: scale·code + zero as one fused
// multiply-add, on host and device alike; NF4: scale·level). Not for FP16 codes.
COCKTAIL_HOST_DEVICE inline float decode_code(Precision p, unsigned code, float scale, float zero) {
  if (p == Precision::nf4) return scale * nf4_level(code);
  return fmaf(scale, float(code), zero);
}

// The value stored for (token, channel).
COCKTAIL_HOST_DEVICE inline float dequantize(const BlockFormat& f, const std::byte* block,
                                             int token, int channel) {
  const unsigned code = read_code(f, block, token, channel);
  if (f.precision == Precision::fp16) return float_from_half_bits(std::uint16_t(code));
  return decode_code(f.precision, code, read_scale(f, block, token, channel),
                     read_zero(f, block, token, channel));
}

}  // namespace cocktail::gpu
