#pragma once

// The rules every Quantizer enforces before it packs or unpacks, whatever its device, and the
// words of its errors, which start as "CpuQuantizer::pack (int4, per-token groups of 32): ".

#include <cstddef>
#include <string>
#include <string_view>

#include "cocktail/quant_spec.hpp"
#include "cocktail/quantizer.hpp"

namespace cocktail {

// "int4, per-token groups of 32"
std::string describe(const QuantSpec& spec);

// "a 48x96 block": `tokens` × `channels`.
std::string describe_block(int tokens, int channels);

// "GpuQuantizer::pack (int4, per-token groups of 32): ", how the errors of `quantizer`'s `call`
// start.
std::string quantizer_call(std::string_view quantizer, std::string_view call,
                           const QuantSpec& spec);

// n_values is the block's tokens × channels, and n_bytes at least its packed_bytes.
void check_quantizer_spans(std::string_view quantizer, std::string_view call, const QuantSpec& spec,
                           const BlockShape& shape, std::size_t n_values, std::size_t n_bytes,
                           std::size_t packed_bytes);

}  // namespace cocktail
