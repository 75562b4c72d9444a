#pragma once

// Planar bit packing of quantization codes, the code format of packed_layout.hpp: with
// k = 8 / bits codes a byte, each 16-byte unit holds 16k consecutive codes, and byte j of the
// unit holds codes j + 16·m (m = 0..k-1) in bits [m·bits, (m+1)·bits).

#include <cstddef>
#include <cstdint>
#include <span>

namespace cocktail::cpu {

// Bytes that `n_codes` codes of `bits` bits occupy.
constexpr std::size_t packed_code_bytes(std::size_t n_codes, int bits) {
  return n_codes * static_cast<std::size_t>(bits) / 8;
}

// Packs codes (each below 2^bits; higher bits are dropped) for bits 2, 4 or 8. For 2 and 4
// bits codes.size() must be a multiple of the 16k-code unit; packed.size() must be
// packed_code_bytes(codes.size(), bits). Throws cocktail::Error otherwise.
void pack_codes(std::span<const std::uint8_t> codes, int bits, std::span<std::byte> packed);

// The inverse of pack_codes, with the same size rules.
void unpack_codes(std::span<const std::byte> packed, int bits, std::span<std::uint8_t> codes);

// Lane packing (packed_layout.hpp) of a rows × cols view, codes[r·cols + c], for bits 2 or 4,
// rows a multiple of 4·(8 / bits) and cols a multiple of 16. Throws cocktail::Error otherwise,
// or when packed.size() is not packed_code_bytes(codes.size(), bits).
void pack_code_lanes(std::span<const std::uint8_t> codes, int bits, int rows, int cols,
                     std::span<std::byte> packed);

// The inverse of pack_code_lanes, with the same size rules.
void unpack_code_lanes(std::span<const std::byte> packed, int bits, int rows, int cols,
                       std::span<std::uint8_t> codes);

}  // namespace cocktail::cpu
