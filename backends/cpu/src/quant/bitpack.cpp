#include "quant/bitpack.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "cocktail/error.hpp"
#include "quant/packed_layout.hpp"

namespace cocktail::cpu {
namespace {

constexpr int kUnitBytes = 16;

void check_sizes(std::size_t n_codes, std::size_t n_bytes, int bits, const char* what) {
  if (bits != 2 && bits != 4 && bits != 8) {
    throw Error(fmt::format("{}: {} bits a code is not supported (2, 4 or 8)", what, bits));
  }
  const auto unit_codes = static_cast<std::size_t>(kUnitBytes * (8 / bits));
  if (bits < 8 && n_codes % unit_codes != 0) {
    throw Error(fmt::format("{}: {} codes of {} bits are not a multiple of the {}-code unit", what,
                            n_codes, bits, unit_codes));
  }
  if (n_bytes != packed_code_bytes(n_codes, bits)) {
    throw Error(fmt::format("{}: {} codes of {} bits need {} bytes, got {}", what, n_codes, bits,
                            packed_code_bytes(n_codes, bits), n_bytes));
  }
}

// Fixed bit widths let the compiler unroll the m loop and vectorise the j loop over 16 bytes.
template <int kBits>
void pack_planar(const std::uint8_t* codes, std::size_t n_units, std::byte* out) {
  constexpr int kPerByte = 8 / kBits;
  constexpr unsigned kMask = (1u << kBits) - 1;
  for (std::size_t u = 0; u < n_units; ++u) {
    const std::uint8_t* in = codes + u * kUnitBytes * kPerByte;
    std::uint8_t bytes[kUnitBytes] = {};
    for (int m = 0; m < kPerByte; ++m) {
      for (int j = 0; j < kUnitBytes; ++j) {
        bytes[j] |= static_cast<std::uint8_t>((in[kUnitBytes * m + j] & kMask) << (m * kBits));
      }
    }
    std::memcpy(out + u * kUnitBytes, bytes, kUnitBytes);
  }
}

template <int kBits>
void unpack_planar(const std::byte* packed, std::size_t n_units, std::uint8_t* codes) {
  constexpr int kPerByte = 8 / kBits;
  constexpr unsigned kMask = (1u << kBits) - 1;
  for (std::size_t u = 0; u < n_units; ++u) {
    std::uint8_t bytes[kUnitBytes];
    std::memcpy(bytes, packed + u * kUnitBytes, kUnitBytes);
    std::uint8_t* out = codes + u * kUnitBytes * kPerByte;
    for (int m = 0; m < kPerByte; ++m) {
      for (int j = 0; j < kUnitBytes; ++j) {
        out[kUnitBytes * m + j] = static_cast<std::uint8_t>((bytes[j] >> (m * kBits)) & kMask);
      }
    }
  }
}

// Byte and bit offset of code (r, c) in a lane-packed view (packed_layout.hpp).
struct LaneSlot {
  std::size_t byte = 0;
  int shift = 0;
};

struct LaneGeometry {
  static constexpr std::size_t kUnitBytes = 64;
  int bits = 0;
  int rows = 0;
  int cols = 0;

  LaneSlot slot(int r, int c) const {
    const int lane = lane_rows(bits);
    const auto unit = static_cast<std::size_t>(c / kLaneColumns) * (rows / lane) + r / lane;
    const int in_lane = r % lane;
    return {kUnitBytes * unit + static_cast<std::size_t>(4 * (c % kLaneColumns) + in_lane % 4),
            bits * (in_lane / 4)};
  }
};

LaneGeometry check_lanes(std::size_t n_codes, std::size_t n_bytes, int bits, int rows, int cols,
                         const char* what) {
  if (bits != 2 && bits != 4) {
    throw Error(fmt::format("{}: lane packing takes 2- or 4-bit codes, not {}", what, bits));
  }
  if (rows < 0 || cols < 0 || rows % lane_rows(bits) != 0 || cols % kLaneColumns != 0) {
    throw Error(
        fmt::format("{}: a {}x{} view cannot be lane-packed (rows a multiple of {}, columns of {})",
                    what, rows, cols, lane_rows(bits), kLaneColumns));
  }
  if (n_codes != static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols)) {
    throw Error(fmt::format("{}: {} codes for a {}x{} view", what, n_codes, rows, cols));
  }
  check_sizes(n_codes, n_bytes, bits, what);
  return {bits, rows, cols};
}

}  // namespace

void pack_code_lanes(std::span<const std::uint8_t> codes, int bits, int rows, int cols,
                     std::span<std::byte> packed) {
  const LaneGeometry geo =
      check_lanes(codes.size(), packed.size(), bits, rows, cols, "pack_code_lanes");
  const unsigned mask = (1u << bits) - 1;
  std::fill(packed.begin(), packed.end(), std::byte{0});
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const LaneSlot at = geo.slot(r, c);
      const unsigned code = codes[static_cast<std::size_t>(r) * cols + c] & mask;
      packed[at.byte] |= static_cast<std::byte>(code << at.shift);
    }
  }
}

void unpack_code_lanes(std::span<const std::byte> packed, int bits, int rows, int cols,
                       std::span<std::uint8_t> codes) {
  const LaneGeometry geo =
      check_lanes(codes.size(), packed.size(), bits, rows, cols, "unpack_code_lanes");
  const unsigned mask = (1u << bits) - 1;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const LaneSlot at = geo.slot(r, c);
      codes[static_cast<std::size_t>(r) * cols + c] =
          static_cast<std::uint8_t>((static_cast<unsigned>(packed[at.byte]) >> at.shift) & mask);
    }
  }
}

void pack_codes(std::span<const std::uint8_t> codes, int bits, std::span<std::byte> packed) {
  check_sizes(codes.size(), packed.size(), bits, "pack_codes");
  if (codes.empty()) return;  // memcpy must not see the null data of an empty span
  const std::size_t n_units = packed.size() / kUnitBytes;
  switch (bits) {
    case 2:
      return pack_planar<2>(codes.data(), n_units, packed.data());
    case 4:
      return pack_planar<4>(codes.data(), n_units, packed.data());
    default:
      std::memcpy(packed.data(), codes.data(), codes.size());
  }
}

void unpack_codes(std::span<const std::byte> packed, int bits, std::span<std::uint8_t> codes) {
  check_sizes(codes.size(), packed.size(), bits, "unpack_codes");
  if (codes.empty()) return;  // memcpy must not see the null data of an empty span
  const std::size_t n_units = packed.size() / kUnitBytes;
  switch (bits) {
    case 2:
      return unpack_planar<2>(packed.data(), n_units, codes.data());
    case 4:
      return unpack_planar<4>(packed.data(), n_units, codes.data());
    default:
      std::memcpy(codes.data(), packed.data(), packed.size());
  }
}

}  // namespace cocktail::cpu
