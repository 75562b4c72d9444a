#include "quant/packed_layout.hpp"

#include <fmt/format.h>

#include <utility>

#include "cocktail/error.hpp"

namespace cocktail::cpu {
namespace {

constexpr std::size_t kHalfBytes = 2;

bool is_bit_packed(Precision p) {
  return code_bits(p) < 8;
}

void check_shape(const QuantSpec& spec, const BlockShape& shape) {
  if (spec.group_size < 1) {
    throw Error(fmt::format("packed layout: group size {} must be at least 1", spec.group_size));
  }
  if (shape.tokens < 1 || shape.channels < 1) {
    throw Error(fmt::format("packed layout: {} block of {} tokens x {} channels is empty",
                            to_string(spec.precision), shape.tokens, shape.channels));
  }
  const auto n = static_cast<std::size_t>(shape.tokens) * static_cast<std::size_t>(shape.channels);
  const auto unit = static_cast<std::size_t>(planar_unit_codes(spec.precision));
  if (is_bit_packed(spec.precision) && n % unit != 0) {
    throw Error(fmt::format(
        "packed layout: {} block of {} tokens x {} channels holds {} codes, not a multiple of "
        "the {}-code planar unit",
        to_string(spec.precision), shape.tokens, shape.channels, n, unit));
  }
}

// Rows × cols of the stored group grid: groups along the grouped axis, then the other axis.
std::pair<int, int> stored_group_grid(const QuantSpec& spec, const BlockShape& shape) {
  if (spec.axis == QuantAxis::per_channel) {
    return {ceil_div(shape.tokens, spec.group_size), shape.channels};
  }
  return {ceil_div(shape.channels, spec.group_size), shape.tokens};
}

// Lane packing where the attention kernels' integer paths can read it (packed_layout.hpp):
// they take 16 rows and 16 columns at a time, and one group's constants for 16 columns.
CodePacking code_packing(const QuantSpec& spec, const BlockShape& shape) {
  const bool integer = spec.precision == Precision::int4 || spec.precision == Precision::int2;
  const bool channel_major = shape.order == CodeOrder::channel_major;
  const bool groups_along_rows = channel_major == (spec.axis == QuantAxis::per_channel);
  const int rows = channel_major ? shape.channels : shape.tokens;
  const int cols = channel_major ? shape.tokens : shape.channels;
  const bool whole_runs = spec.group_size % kLaneColumns == 0 || spec.group_size >= cols;
  if (integer && groups_along_rows && rows % 16 == 0 && cols % kLaneColumns == 0 && whole_runs) {
    return CodePacking::lanes;
  }
  return CodePacking::planar;
}

}  // namespace

PackedLayout packed_layout(const QuantSpec& spec, const BlockShape& shape) {
  check_shape(spec, shape);
  const auto n = static_cast<std::size_t>(shape.tokens) * static_cast<std::size_t>(shape.channels);
  PackedLayout layout;
  if (spec.precision == Precision::fp16) {
    layout.codes_bytes = kHalfBytes * n;
    layout.scales_offset = layout.zeros_offset = layout.total_bytes = layout.codes_bytes;
    return layout;
  }
  layout.codes_bytes = n * static_cast<std::size_t>(code_bits(spec.precision)) / 8;
  layout.packing = code_packing(spec, shape);

  const auto [rows, cols] = stored_group_grid(spec, shape);
  layout.group_rows = rows;
  layout.group_cols = cols;
  layout.n_groups = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);

  const std::size_t meta_bytes = kHalfBytes * layout.n_groups;
  layout.scales_offset = layout.codes_bytes;
  layout.zeros_offset = layout.scales_offset + meta_bytes;
  layout.total_bytes = layout.zeros_offset;
  if (spec.precision != Precision::nf4) layout.total_bytes += meta_bytes;
  return layout;
}

}  // namespace cocktail::cpu
