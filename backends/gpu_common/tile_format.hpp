#pragma once

// The GPU's packed block, and the store's tile made of two of them: the one definition the
// commit kernels and the quantizer write and the attention kernels read, usable on host and
// device, by the CUDA/HIP and the Vulkan backends. backends/cuda/src/kv/tile_codes.cuh reads
// single codes and constants of it.
//
// A block is `tokens` tokens × head_dim channels of one precision:
//
//   [ codes | scales | zeros ]        every part starting on a 16-byte boundary, the block
//                                     padded to 16 B
//
// Codes are token-major: row t holds the head_dim codes of token t and starts at byte
// t · row_bytes(), so one 16-byte load brings a run of channels of one token (rows are 16-byte
// aligned when row_bytes() is a multiple of 16: always for FP16, INT8 and INT4; for INT2 when
// head_dim is a multiple of 64). Inside a row, FP16 is plain halves, INT8 one byte a code, and
// INT4/NF4/INT2 are planar units as on the CPU: with k = 8/bits codes a byte, a 16-byte unit
// holds 16k consecutive channels and its byte j holds channel j + 16m in bits
// [m·bits, (m+1)·bits). One load, shifted by m·bits and masked, gives 16 consecutive codes, and
// a 32-bit word masked with 0x0F0F0F0F (INT4) or 0x03030303 (INT2) gives four bytes that are
// four consecutive channels' codes. head_dim is a multiple of 32, so INT4 rows are whole units;
// an INT2 row of head_dim ≡ 32 (mod 64) ends in a half unit, 8 bytes holding 32 channels, whose
// byte j holds channel j + 8m (an 8-byte load gives 8 consecutive codes a shift).
//
// Scales and zeros are FP16 (NF4: the group's absmax as its scale, no zeros; FP16: neither):
//   per-channel groups (one channel over group_size consecutive tokens from token 0):
//     [ceil(tokens / group_size)][head_dim] scales, then zeros the same; in the store's tiles
//     tokens == group_size, so that is head_dim scales indexed by channel;
//   per-token groups (group_size consecutive channels of one token from channel 0):
//     [tokens][groups_per_token] scales, then zeros the same, with
//     groups_per_token = ceil(head_dim / group_size).
// scale_index() is where a group's constants are; group() is the group an index names.
// Dequantization: x = scale·code + zero (integers), x = scale·kNf4Levels[code] (NF4).
//
// The store's tile is `group_size` tokens of one layer × KV head: the key block, then the value
// block (TileFormat).

#include <cstddef>
#include <cstdint>

#include "cocktail/precision.hpp"
#include "cocktail/quant_spec.hpp"
#include "gpu_common/host_device.hpp"

namespace cocktail::gpu {

constexpr std::size_t kTileAlign = 16;
// Bytes of a planar unit of INT4/NF4/INT2 codes.
constexpr int kUnitBytes = 16;

COCKTAIL_HOST_DEVICE constexpr std::size_t align_tile(std::size_t bytes) {
  return (bytes + kTileAlign - 1) / kTileAlign * kTileAlign;
}

COCKTAIL_HOST_DEVICE constexpr int precision_bits(Precision p) {
  switch (p) {
    case Precision::fp16:
      return 16;
    case Precision::int8:
      return 8;
    case Precision::nf4:
    case Precision::int4:
      return 4;
    case Precision::int2:
      return 2;
  }
  return 16;
}

// Where one code sits: `byte` from the block's start, its bits from `shift` up.
struct CodeSlot {
  std::size_t byte = 0;
  int shift = 0;
};

// One quantization group: `length` elements from (token, channel), along the tokens
// (per-channel groups) or along the channels (per-token groups).
struct GroupSpan {
  int token = 0;
  int channel = 0;
  int length = 0;
  bool along_tokens = false;

  // Token and channel of the group's element i (0 <= i < length).
  COCKTAIL_HOST_DEVICE constexpr int token_at(int i) const {
    return token + (along_tokens ? i : 0);
  }
  COCKTAIL_HOST_DEVICE constexpr int channel_at(int i) const {
    return channel + (along_tokens ? 0 : i);
  }
};

// The parts of one block (keys or values) of a tile, in bytes from the block's start.
struct BlockFormat {
  Precision precision = Precision::fp16;
  QuantAxis axis = QuantAxis::per_channel;
  int tokens = 32;
  int head_dim = 128;
  int group_size = 32;

  COCKTAIL_HOST_DEVICE constexpr int bits() const { return precision_bits(precision); }
  COCKTAIL_HOST_DEVICE constexpr std::size_t row_bytes() const {
    return std::size_t(head_dim) * std::size_t(bits()) / 8;
  }
  COCKTAIL_HOST_DEVICE constexpr std::size_t code_bytes() const {
    return align_tile(std::size_t(tokens) * row_bytes());
  }
  COCKTAIL_HOST_DEVICE constexpr int groups_per_token() const {
    return (head_dim + group_size - 1) / group_size;
  }
  // Groups along the tokens of a per-channel block: rows of its scale grid.
  COCKTAIL_HOST_DEVICE constexpr int token_groups() const {
    return (tokens + group_size - 1) / group_size;
  }
  // Scales (or zeros) in the block: none for FP16.
  COCKTAIL_HOST_DEVICE constexpr std::size_t n_scales() const {
    if (precision == Precision::fp16) return 0;
    return axis == QuantAxis::per_channel ? std::size_t(token_groups()) * std::size_t(head_dim)
                                          : std::size_t(tokens) * std::size_t(groups_per_token());
  }
  COCKTAIL_HOST_DEVICE constexpr bool has_zeros() const {
    return precision != Precision::fp16 && precision != Precision::nf4;
  }
  COCKTAIL_HOST_DEVICE constexpr std::size_t scales_offset() const { return code_bytes(); }
  COCKTAIL_HOST_DEVICE constexpr std::size_t zeros_offset() const {
    return scales_offset() + align_tile(n_scales() * 2);
  }
  COCKTAIL_HOST_DEVICE constexpr std::size_t bytes() const {
    return zeros_offset() + (has_zeros() ? align_tile(n_scales() * 2) : 0);
  }

  // Index into the scales (and zeros) of the group that holds (token, channel).
  COCKTAIL_HOST_DEVICE constexpr std::size_t scale_index(int token, int channel) const {
    return axis == QuantAxis::per_channel
               ? std::size_t(token / group_size) * std::size_t(head_dim) + std::size_t(channel)
               : std::size_t(token) * std::size_t(groups_per_token()) +
                     std::size_t(channel / group_size);
  }
  // The group whose constants are at scale index g (g < n_scales()): the inverse of
  // scale_index for a group's first element.
  COCKTAIL_HOST_DEVICE constexpr GroupSpan group(std::size_t g) const {
    if (axis == QuantAxis::per_channel) {
      const int token = int(g / std::size_t(head_dim)) * group_size;
      const int length = tokens - token < group_size ? tokens - token : group_size;
      return {token, int(g % std::size_t(head_dim)), length, true};
    }
    const auto per_token = std::size_t(groups_per_token());
    const int channel = int(g % per_token) * group_size;
    const int length = head_dim - channel < group_size ? head_dim - channel : group_size;
    return {int(g / per_token), channel, length, false};
  }

  // Bytes of planar unit `unit` of a row: 16, or 8 for the half unit that ends an INT2 row of
  // head_dim ≡ 32 (mod 64).
  COCKTAIL_HOST_DEVICE constexpr int unit_bytes(int unit) const {
    const int left = int(row_bytes()) - unit * kUnitBytes;
    return left < kUnitBytes ? left : kUnitBytes;
  }
  // Where the code of (token, channel) is (see the planar units above).
  COCKTAIL_HOST_DEVICE constexpr CodeSlot code_slot(int token, int channel) const {
    const std::size_t row = std::size_t(token) * row_bytes();
    const int b = bits();
    if (b >= 8) return {row + std::size_t(channel) * std::size_t(b / 8), 0};
    const int unit_channels = kUnitBytes * (8 / b);
    const int unit = channel / unit_channels;
    const int in_unit = channel % unit_channels;
    const int width = unit_bytes(unit);
    return {row + std::size_t(unit * kUnitBytes + in_unit % width), in_unit / width * b};
  }
  // The channel whose code is in bits [plane·bits, (plane+1)·bits) of byte `row_byte` of a row
  // of a bit-packed block: the inverse of code_slot, for writers that make a byte at a time.
  COCKTAIL_HOST_DEVICE constexpr int slot_channel(int row_byte, int plane) const {
    const int unit = row_byte / kUnitBytes;
    return unit * kUnitBytes * (8 / bits()) + row_byte % kUnitBytes + plane * unit_bytes(unit);
  }
};

// A whole tile: the key block, then the value block.
struct TileFormat {
  BlockFormat keys;
  BlockFormat values;

  COCKTAIL_HOST_DEVICE constexpr std::size_t values_offset() const { return keys.bytes(); }
  COCKTAIL_HOST_DEVICE constexpr std::size_t bytes() const { return keys.bytes() + values.bytes(); }
};

inline TileFormat tile_format(Precision p, const KvQuantLayout& layout, int head_dim) {
  return {{p, layout.key_axis, layout.group_size, head_dim, layout.group_size},
          {p, layout.value_axis, layout.group_size, head_dim, layout.group_size}};
}

}  // namespace cocktail::gpu
