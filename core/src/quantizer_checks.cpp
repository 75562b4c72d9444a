#include "cocktail/quantizer_checks.hpp"

#include <fmt/format.h>

#include "cocktail/error.hpp"

namespace cocktail {

std::string describe(const QuantSpec& spec) {
  return fmt::format("{}, per-{} groups of {}", to_string(spec.precision), to_string(spec.axis),
                     spec.group_size);
}

std::string describe_block(int tokens, int channels) {
  return fmt::format("a {}x{} block", tokens, channels);
}

std::string quantizer_call(std::string_view quantizer, std::string_view call,
                           const QuantSpec& spec) {
  return fmt::format("{}::{} ({}): ", quantizer, call, describe(spec));
}

void check_quantizer_spans(std::string_view quantizer, std::string_view call, const QuantSpec& spec,
                           const BlockShape& shape, std::size_t n_values, std::size_t n_bytes,
                           std::size_t packed_bytes) {
  const std::size_t need = std::size_t(shape.tokens) * std::size_t(shape.channels);
  if (n_values != need) {
    throw Error(fmt::format("{}{} values for {}, need {}", quantizer_call(quantizer, call, spec),
                            n_values, describe_block(shape.tokens, shape.channels), need));
  }
  if (n_bytes < packed_bytes) {
    throw Error(fmt::format("{}{} bytes for {}, need {}", quantizer_call(quantizer, call, spec),
                            n_bytes, describe_block(shape.tokens, shape.channels), packed_bytes));
  }
}

}  // namespace cocktail
