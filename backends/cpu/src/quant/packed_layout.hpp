#pragma once

// The CPU backend's packed block format, shared by the quantizer (which writes it) and the
// attention kernels (which read it in place). A packed block is
//
//   [codes][scales][zeros]
//
// codes:  tokens·channels codes in the block's CodeOrder (flat index c·tokens + t when
//         channel-major, t·channels + c when token-major). FP16 stores IEEE halves and has no
//         scales or zeros. INT8 stores one byte a code. INT4, NF4 and INT2 are bit-packed
//         planar in 16-byte units: with k = 8 / bits codes a byte, unit u holds flat codes
//         [16k·u, 16k·(u+1)), and byte j of the unit holds codes 16k·u + j + 16·m (m = 0..k-1)
//         in bits [m·bits, (m+1)·bits). One 16-byte load, shifted by m·bits and masked, gives
//         16 consecutive codes: a full vector of lanes without shuffles.
//         Lane packing replaces the planar units of INT4 and INT2 blocks whose groups run
//         along the rows of the storage view, the rows × cols matrix [channel][token] of a
//         channel-major block or [token][channel] of a token-major one (keys per channel,
//         values per token), when rows and cols are multiples of 16 and each group covers
//         whole runs of 16 columns. It is the layout of 8-bit integer dot products (vpdpbusd),
//         which sum the 4 bytes of a 32-bit lane: with L = 4k rows a lane, 64-byte units are
//         stored [16-column block b][L-row group g], and byte 4·i + j of a unit holds, in bits
//         [m·bits, (m+1)·bits), the code of row L·g + 4·m + j, column 16·b + i. A 32-bit lane
//         is one column's codes for L rows; plane m of it, shifted and masked, gives 4 bytes of
//         4 consecutive rows: 16 columns × 4 rows, dotted with 4 row weights in one instruction.
// scales, zeros: one FP16 each per quantization group (NF4: scales only, the group's absmax),
//         in either code order stored as [group along the grouped axis][other axis]:
//         [ceil(tokens/G)][channels] for per-channel groups, [ceil(channels/G)][tokens] for
//         per-token groups. A kernel vectorised over either axis then finds the constants of
//         its lanes contiguous (per-token value scales are a vector over the tile's tokens).
//
// Dequantization: integer x = scale·code + zero; NF4 x = scale·kNf4Table[code].

#include <array>
#include <cstddef>

#include "cocktail/quant_spec.hpp"
#include "cocktail/quantizer.hpp"

namespace cocktail::cpu {

// The NF4 levels of quant_spec.hpp, as the array the CPU kernels gather from.
inline constexpr std::array<float, 16> kNf4Table = std::to_array(kNf4Levels);

// Flat codes per planar unit: 16 bytes × codes per byte.
constexpr int planar_unit_codes(Precision p) {
  return 16 * (8 / code_bits(p));
}

// How a block's INT4 / INT2 codes are arranged (see above); other precisions are unpacked.
enum class CodePacking : unsigned char { planar, lanes };

// Columns (32-bit lanes) of a lane-packed unit, and rows a lane holds for `bits`-bit codes.
inline constexpr int kLaneColumns = 16;
constexpr int lane_rows(int bits) {
  return 4 * (8 / bits);
}

struct PackedLayout {
  CodePacking packing = CodePacking::planar;
  std::size_t codes_bytes = 0;
  std::size_t n_groups = 0;       // scales (and zeros) per block
  std::size_t scales_offset = 0;  // bytes from the block start
  std::size_t zeros_offset = 0;   // == total_bytes when the precision has no zeros
  std::size_t total_bytes = 0;
  int group_rows = 0;  // the stored group grid: rows × cols (see above)
  int group_cols = 0;
};

inline int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

// Throws cocktail::Error when the shape cannot be packed (bit-packed precisions need
// tokens·channels to be a multiple of planar_unit_codes; the group size must be positive).
PackedLayout packed_layout(const QuantSpec& spec, const BlockShape& shape);

}  // namespace cocktail::cpu
