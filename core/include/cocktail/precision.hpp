#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace cocktail {

// Storage precision of a K/V element. Declared from highest to lowest fidelity: the storage
// order of a committed cache follows this order.
enum class Precision : unsigned char { fp16, int8, nf4, int4, int2 };

inline constexpr std::array<Precision, 5> kAllPrecisions = {
    Precision::fp16, Precision::int8, Precision::nf4, Precision::int4, Precision::int2};

// Bits of one stored code, metadata (scales, zeros) not included.
constexpr int code_bits(Precision p) {
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
  return 0;
}

constexpr std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::fp16:
      return "fp16";
    case Precision::int8:
      return "int8";
    case Precision::nf4:
      return "nf4";
    case Precision::int4:
      return "int4";
    case Precision::int2:
      return "int2";
  }
  return "?";
}

constexpr std::optional<Precision> parse_precision(std::string_view name) {
  for (Precision p : kAllPrecisions) {
    if (to_string(p) == name) return p;
  }
  return std::nullopt;
}

}  // namespace cocktail
