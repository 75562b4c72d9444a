#include "gpu_common/quantizer_format.hpp"

#include <string>

#include "cocktail/error.hpp"
#include "cocktail/quantizer_checks.hpp"

namespace cocktail::gpu {

BlockFormat quantizer_format(std::string_view quantizer, std::string_view call,
                             const QuantSpec& spec, const BlockShape& shape) {
  if (shape.tokens < 0 || shape.channels < 0) {
    throw Error(quantizer_call(quantizer, call, spec) +
                describe_block(shape.tokens, shape.channels) + " has a negative size");
  }
  // A row of planar units is whole units, or whole units and one half unit of INT2.
  if (precision_bits(spec.precision) < 8 && shape.channels % 32 != 0) {
    throw Error(quantizer_call(quantizer, call, spec) +
                describe_block(shape.tokens, shape.channels) + " cannot be packed: " +
                std::string(to_string(spec.precision)) + " codes need a multiple of 32 channels");
  }
  return {spec.precision, spec.axis, shape.tokens, shape.channels, spec.group_size};
}

}  // namespace cocktail::gpu
