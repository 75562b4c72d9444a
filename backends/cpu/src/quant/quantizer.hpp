#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

#include "cocktail/float16.hpp"
#include "cocktail/quant_spec.hpp"
#include "cocktail/quantizer.hpp"

namespace cocktail::cpu {

// IEEE binary16 conversions with round-to-nearest-even. Highway 1.0.3 has no scalar F16
// helpers (and its emulated DemoteTo truncates), so these use the compiler's half type.
inline std::uint16_t f16_bits_from_f32(float x) {
  return std::bit_cast<std::uint16_t>(static_cast<Float16>(x));
}

inline float f32_from_f16_bits(std::uint16_t bits) {
  return static_cast<float>(std::bit_cast<Float16>(bits));
}

// The CPU backend's quantizer; writes and reads the block format of packed_layout.hpp.
//
// Integer precisions are asymmetric per group: scale = (max − min)/(2^b − 1) and zero = min
// (with RangeFit::least_squares, INT4 and INT2 groups refine that range by least squares
// first) are rounded to FP16, and codes are computed from the rounded values,
// code = clamp(round_half_even((x − zero)/scale), 0, 2^b − 1) (0 when the scale is 0). NF4
// stores the group's absmax and the index of the level nearest to x/absmax. FP16 stores
// halves in the block's CodeOrder.
//
// pack() throws cocktail::Error for a NaN or infinite value, or one whose stored FP16 form
// (value, zero or absmax) would overflow, naming its token and channel. Both calls need
// values.size() == tokens·channels and packed.size() >= packed_bytes(shape); only the
// first packed_bytes(shape) bytes are written or read.
class CpuQuantizer final : public Quantizer {
 public:
  // Throws cocktail::Error unless 1 <= spec.group_size <= 4096.
  explicit CpuQuantizer(const QuantSpec& spec);

  const QuantSpec& spec() const override { return spec_; }
  std::size_t packed_bytes(const BlockShape& shape) const override;
  void pack(std::span<const float> values, const BlockShape& shape,
            std::span<std::byte> packed) const override;
  void unpack(std::span<const std::byte> packed, const BlockShape& shape,
              std::span<float> values) const override;

 private:
  QuantSpec spec_;
};

}  // namespace cocktail::cpu
