#pragma once

#include <optional>
#include <string_view>

#include "cocktail/precision.hpp"

namespace cocktail {

// Which elements share one scale and zero.
//  per_channel: one channel over `group_size` consecutive tokens (KIVI's choice for keys);
//  per_token:   one token over `group_size` consecutive channels (KIVI's choice for values).
enum class QuantAxis : unsigned char { per_channel, per_token };

constexpr std::string_view to_string(QuantAxis a) {
  return a == QuantAxis::per_channel ? "channel" : "token";
}

constexpr std::optional<QuantAxis> parse_quant_axis(std::string_view name) {
  if (name == "channel") return QuantAxis::per_channel;
  if (name == "token") return QuantAxis::per_token;
  return std::nullopt;
}

// How an integer group's scale and zero are chosen.
//  min_max:       the group's range, so every value is within half a step of its code;
//  least_squares: refined from the range by alternately assigning codes and refitting scale
//                 and zero by least squares while the group's squared error falls. It may clip
//                 outliers, and applies to the integer precisions of 4 bits or fewer.
enum class RangeFit : unsigned char { min_max, least_squares };

constexpr std::string_view to_string(RangeFit f) {
  return f == RangeFit::min_max ? "min_max" : "least_squares";
}

constexpr std::optional<RangeFit> parse_range_fit(std::string_view name) {
  if (name == "min_max") return RangeFit::min_max;
  if (name == "least_squares") return RangeFit::least_squares;
  return std::nullopt;
}

// How one block of values is quantized. Integer precisions are asymmetric:
// x ≈ scale·code + zero, with scale and zero stored in FP16. NF4 is block-wise absmax:
// x ≈ absmax·nf4_table[code]. FP16 ignores group and axis.
struct QuantSpec {
  Precision precision = Precision::fp16;
  int group_size = 32;
  QuantAxis axis = QuantAxis::per_token;
  RangeFit range = RangeFit::min_max;

  friend bool operator==(const QuantSpec&, const QuantSpec&) = default;
};

// The 16 NF4 levels (normal-float quantiles, QLoRA, Dettmers et al. 2023), from -1 to 1: an NF4
// code c decodes to absmax·kNf4Levels[c]. A plain array, so that GPU code can copy it into its
// own constant tables.
inline constexpr float kNf4Levels[16] = {-1.0f,
                                         -0.6961928009986877f,
                                         -0.5250730514526367f,
                                         -0.39491748809814453f,
                                         -0.28444138169288635f,
                                         -0.18477343022823334f,
                                         -0.09105003625154495f,
                                         0.0f,
                                         0.07958029955625534f,
                                         0.16093020141124725f,
                                         0.24611230194568634f,
                                         0.33791524795532227f,
                                         0.44070982489585876f,
                                         0.5626170039176941f,
                                         0.7229568362236023f,
                                         1.0f};

// Quantization layout of a whole K/V cache: the group size, the axis for keys and values, and
// the range fit.
// Every precision of a mixed cache uses the same layout.
struct KvQuantLayout {
  int group_size = 32;
  QuantAxis key_axis = QuantAxis::per_channel;
  QuantAxis value_axis = QuantAxis::per_token;
  RangeFit range = RangeFit::min_max;

  QuantSpec key_spec(Precision p) const { return {p, group_size, key_axis, range}; }
  QuantSpec value_spec(Precision p) const { return {p, group_size, value_axis, range}; }

  friend bool operator==(const KvQuantLayout&, const KvQuantLayout&) = default;
};

// Bits one element of precision `p` occupies with its share of the metadata, for groups of
// `group_size` elements: integer codes carry an FP16 scale and zero per group, NF4 an FP16
// absmax, FP16 nothing. What a backend's store holds, up to alignment padding.
constexpr double stored_bits(Precision p, int group_size) {
  const double half_bits = 16.0 / group_size;
  switch (p) {
    case Precision::fp16:
      return code_bits(p);
    case Precision::nf4:
      return code_bits(p) + half_bits;
    default:
      return code_bits(p) + 2 * half_bits;
  }
}

}  // namespace cocktail
