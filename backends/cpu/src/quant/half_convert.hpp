#pragma once

#include <cstdint>
#include <span>

namespace cocktail::cpu {

// Bulk IEEE binary16 conversions, round to nearest even, bit-identical to the scalar
// f16_bits_from_f32 / f32_from_f16_bits of quantizer.hpp. Where the CPU has hardware
// conversion (F16C) they use it; the scalar forms are library calls in this build, which made
// the KV append and commit of a long prefill spend several percent of their time converting.
// `out` must hold as many elements as `in`.
void halves_from_floats(std::span<const float> in, std::uint16_t* out);
void floats_from_halves(std::span<const std::uint16_t> in, float* out);

}  // namespace cocktail::cpu
