#include "quant/quantizer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cocktail/error.hpp"
#include "cocktail/quantizer_checks.hpp"
#include "quant/bitpack.hpp"
#include "quant/half_convert.hpp"
#include "quant/packed_layout.hpp"

namespace cocktail::cpu {
namespace {

constexpr int kMaxGroupSize = 4096;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr std::uint32_t kF32ExpMask = 0x7f800000u;
constexpr std::uint16_t kF16ExpMask = 0x7c00u;
constexpr std::string_view kGroupCulprit = "a value in the group starting";

// Decision boundaries between neighbouring NF4 levels: a code is the number of them below x.
constexpr std::array<float, 15> kNf4Midpoints = [] {
  std::array<float, 15> mid{};
  for (std::size_t i = 0; i < mid.size(); ++i) mid[i] = (kNf4Table[i] + kNf4Table[i + 1]) / 2;
  return mid;
}();

void store_half(std::byte* base, std::size_t index, std::uint16_t bits) {
  std::memcpy(base + 2 * index, &bits, sizeof bits);
}

std::uint16_t load_half(const std::byte* base, std::size_t index) {
  std::uint16_t bits;
  std::memcpy(&bits, base + 2 * index, sizeof bits);
  return bits;
}

// The block as a row-major matrix in storage order: the values themselves for token-major
// blocks, their transpose for channel-major ones. Code i of the block is element i of this
// view and the stored group grid is the view's own grid, so one code path serves both orders.
struct ViewGeometry {
  int rows = 0;
  int cols = 0;
  int group = 1;
  bool along_rows = false;  // a group spans `group` rows of one column, else `group` columns

  int grid_cols() const { return along_rows ? cols : ceil_div(cols, group); }
};

ViewGeometry view_geometry(const QuantSpec& spec, const BlockShape& shape) {
  const bool token_major = shape.order == CodeOrder::token_major;
  // Per-channel groups run along tokens: the rows of a token-major view.
  const bool along_tokens = spec.axis == QuantAxis::per_channel;
  return {token_major ? shape.tokens : shape.channels, token_major ? shape.channels : shape.tokens,
          spec.group_size, along_tokens == token_major};
}

// Where group g of the view's grid is stored: grids are kept group-axis-major (see
// packed_layout.hpp), which is the view's own order only when its groups run along rows.
std::size_t stored_group(const ViewGeometry& geo, std::size_t g) {
  if (geo.along_rows) return g;
  const auto grid_cols = static_cast<std::size_t>(geo.grid_cols());
  return (g % grid_cols) * static_cast<std::size_t>(geo.rows) + g / grid_cols;
}

struct BlockPosition {
  int token = 0;
  int channel = 0;
};

// Block position of the first element of group g, for error messages.
BlockPosition group_origin(const ViewGeometry& geo, const BlockShape& shape, std::size_t g) {
  const auto grid_cols = static_cast<std::size_t>(geo.grid_cols());
  int row = static_cast<int>(g / grid_cols);
  int col = static_cast<int>(g % grid_cols);
  if (geo.along_rows) {
    row *= geo.group;
  } else {
    col *= geo.group;
  }
  if (shape.order == CodeOrder::token_major) return {row, col};
  return {col, row};
}

// dst = the transpose of the rows × cols matrix src. Walking dst in order makes the loads
// strided rather than the stores, which measured faster than the other order or tiling.
void transpose(const float* src, int rows, int cols, float* dst) {
  for (int c = 0; c < cols; ++c) {
    for (int r = 0; r < rows; ++r) {
      *dst++ = src[static_cast<std::size_t>(r) * cols + c];
    }
  }
}

// std::min and std::max would skip a NaN silently, so non-finite values are rejected before
// quantizing. The all-finite case is one vectorisable pass over the exponent bits.
void check_finite(std::span<const float> values, const QuantSpec& spec, const BlockShape& shape) {
  std::uint32_t any = 0;
  for (float x : values) any |= (std::bit_cast<std::uint32_t>(x) & kF32ExpMask) == kF32ExpMask;
  if (any == 0) return;
  const auto it =
      std::find_if(values.begin(), values.end(), [](float x) { return !std::isfinite(x); });
  const auto i = static_cast<std::size_t>(it - values.begin());
  const auto channels = static_cast<std::size_t>(shape.channels);
  throw Error(
      fmt::format("CpuQuantizer::pack ({}): non-finite value {} at token {}, channel {} "
                  "of a {}x{} block",
                  describe(spec), *it, i / channels, i % channels, shape.tokens, shape.channels));
}

// `what` names the culprit: "the value" or "a value in the group starting".
[[noreturn]] void throw_fp16_overflow(const QuantSpec& spec, const BlockShape& shape,
                                      BlockPosition at, std::string_view what) {
  throw Error(fmt::format(
      "CpuQuantizer::pack ({}): {} at token {}, channel {} of a {}x{} block is beyond the FP16 "
      "range",
      describe(spec), what, at.token, at.channel, shape.tokens, shape.channels));
}

// Min and max of a run of n >= 1 values. Independent lanes let the compiler vectorise the
// scan (a single running min is a serial chain it may not reorder).
std::pair<float, float> run_range(const float* x, int n) {
  constexpr int kLanes = 8;
  float lo[kLanes];
  float hi[kLanes];
  for (int l = 0; l < kLanes; ++l) lo[l] = hi[l] = x[l < n ? l : 0];
  int i = kLanes;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      lo[l] = std::min(lo[l], x[i + l]);
      hi[l] = std::max(hi[l], x[i + l]);
    }
  }
  for (; i < n; ++i) {
    lo[0] = std::min(lo[0], x[i]);
    hi[0] = std::max(hi[0], x[i]);
  }
  return {*std::min_element(lo, lo + kLanes), *std::max_element(hi, hi + kLanes)};
}

// Min and max of every group of the view, in grid order.
void group_ranges(const float* view, const ViewGeometry& geo, float* lo, float* hi) {
  const auto grid_cols = static_cast<std::size_t>(geo.grid_cols());
  for (int r = 0; r < geo.rows; ++r) {
    const float* src = view + static_cast<std::size_t>(r) * geo.cols;
    if (geo.along_rows) {
      float* l = lo + static_cast<std::size_t>(r / geo.group) * grid_cols;
      float* h = hi + static_cast<std::size_t>(r / geo.group) * grid_cols;
      const bool first_row = r % geo.group == 0;
      for (int c = 0; c < geo.cols; ++c) {
        l[c] = first_row ? src[c] : std::min(l[c], src[c]);
        h[c] = first_row ? src[c] : std::max(h[c], src[c]);
      }
      continue;
    }
    for (int c0 = 0, g = 0; c0 < geo.cols; c0 += geo.group, ++g) {
      const auto [mn, mx] = run_range(src + c0, std::min(geo.group, geo.cols - c0));
      lo[static_cast<std::size_t>(r) * grid_cols + g] = mn;
      hi[static_cast<std::size_t>(r) * grid_cols + g] = mx;
    }
  }
}

// Rounds q in [0, 2^23) to an integer, ties to even, in one vectorisable step (std::nearbyint
// is a libm call here).
float round_code(float q) {
  return (q + 0x1p23f) - 0x1p23f;
}

// Sums over a group's values x and their codes q that the least-squares refit needs.
struct FitSums {
  double q = 0, qq = 0, x = 0, xq = 0;
};

// One pass of the least-squares fit over a group: assigns codes under (scale, zero), fills
// `sums` and returns the squared error of those codes.
double assign_codes(const float* x, int n, float scale, float zero, float max_code, FitSums& sums) {
  double error = 0;
  FitSums s;
  for (int i = 0; i < n; ++i) {
    const float q = round_code(std::clamp((x[i] - zero) / scale, 0.0f, max_code));
    const double d = double(scale) * q + zero - x[i];
    error += d * d;
    s.q += q;
    s.qq += double(q) * q;
    s.x += x[i];
    s.xq += double(x[i]) * q;
  }
  sums = s;
  return error;
}

// Refines [lo, hi] of one group of n values to the least-squares fit (see RangeFit): codes are
// assigned under the current scale and zero, then scale and zero are refit to those codes, for
// as long as the squared error falls. Starting from the min/max range, the result is never
// worse than it.
void fit_least_squares(const float* x, int n, float max_code, float& lo, float& hi) {
  constexpr int kMaxRounds = 4;
  float scale = (hi - lo) / max_code;
  float zero = lo;
  if (!(scale > 0)) return;
  FitSums sums;
  double best = assign_codes(x, n, scale, zero, max_code, sums);
  for (int round = 0; round < kMaxRounds; ++round) {
    const double det = n * sums.qq - sums.q * sums.q;
    if (!(det > 0)) break;  // every value on one code: nothing to refit
    const auto next_scale = static_cast<float>((n * sums.xq - sums.q * sums.x) / det);
    const auto next_zero = static_cast<float>((sums.x - double(next_scale) * sums.q) / n);
    if (!(next_scale > 0)) break;
    FitSums next_sums;
    const double error = assign_codes(x, n, next_scale, next_zero, max_code, next_sums);
    if (!(error < best)) break;
    best = error;
    scale = next_scale;
    zero = next_zero;
    sums = next_sums;
  }
  lo = zero;
  hi = zero + max_code * scale;
}

// Applies fit_least_squares to every group of the view, in grid order.
void fit_group_ranges(const float* view, const ViewGeometry& geo, float max_code, float* lo,
                      float* hi) {
  const auto grid_cols = static_cast<std::size_t>(geo.grid_cols());
  if (!geo.along_rows) {
    for (int r = 0; r < geo.rows; ++r) {
      for (int c0 = 0; c0 < geo.cols; c0 += geo.group) {
        const std::size_t g = static_cast<std::size_t>(r) * grid_cols + c0 / geo.group;
        fit_least_squares(view + static_cast<std::size_t>(r) * geo.cols + c0,
                          std::min(geo.group, geo.cols - c0), max_code, lo[g], hi[g]);
      }
    }
    return;
  }
  // A group runs down one column: gather it first.
  std::vector<float> column(static_cast<std::size_t>(geo.group));
  for (int r0 = 0; r0 < geo.rows; r0 += geo.group) {
    const int n = std::min(geo.group, geo.rows - r0);
    for (int c = 0; c < geo.cols; ++c) {
      for (int i = 0; i < n; ++i) {
        column[static_cast<std::size_t>(i)] = view[static_cast<std::size_t>(r0 + i) * geo.cols + c];
      }
      const std::size_t g = static_cast<std::size_t>(r0 / geo.group) * grid_cols + c;
      fit_least_squares(column.data(), n, max_code, lo[g], hi[g]);
    }
  }
}

// Per-group arrays the codes are computed from: the FP16-rounded zero (0 for NF4) and the
// FP16-rounded scale, with a zero scale turned into infinity so that it sends codes to 0.
struct Encoding {
  std::vector<float> zero;
  std::vector<float> divisor;
};

float divisor_of(float scale) {
  return scale > 0 ? scale : kInf;
}

// Stores the asymmetric scale and zero of every group and returns them as rounded to FP16.
Encoding int_encoding(const std::vector<float>& lo, const std::vector<float>& hi,
                      const QuantSpec& spec, const BlockShape& shape, const ViewGeometry& geo,
                      const PackedLayout& layout, std::byte* block) {
  const auto levels = static_cast<float>((1 << code_bits(spec.precision)) - 1);
  Encoding enc{std::vector<float>(lo.size()), std::vector<float>(lo.size())};
  for (std::size_t g = 0; g < lo.size(); ++g) {
    const std::uint16_t zero = f16_bits_from_f32(lo[g]);
    const std::uint16_t scale = f16_bits_from_f32((hi[g] - lo[g]) / levels);
    if ((zero & kF16ExpMask) == kF16ExpMask || (scale & kF16ExpMask) == kF16ExpMask) {
      throw_fp16_overflow(spec, shape, group_origin(geo, shape, g), kGroupCulprit);
    }
    store_half(block + layout.scales_offset, stored_group(geo, g), scale);
    store_half(block + layout.zeros_offset, stored_group(geo, g), zero);
    enc.zero[g] = f32_from_f16_bits(zero);
    enc.divisor[g] = divisor_of(f32_from_f16_bits(scale));
  }
  return enc;
}

// Stores the absmax of every group and returns it as rounded to FP16.
Encoding nf4_encoding(const std::vector<float>& lo, const std::vector<float>& hi,
                      const QuantSpec& spec, const BlockShape& shape, const ViewGeometry& geo,
                      const PackedLayout& layout, std::byte* block) {
  Encoding enc{std::vector<float>(lo.size(), 0.0f), std::vector<float>(lo.size())};
  for (std::size_t g = 0; g < lo.size(); ++g) {
    const std::uint16_t absmax = f16_bits_from_f32(std::max(-lo[g], hi[g]));
    if ((absmax & kF16ExpMask) == kF16ExpMask) {
      throw_fp16_overflow(spec, shape, group_origin(geo, shape, g), kGroupCulprit);
    }
    store_half(block + layout.scales_offset, stored_group(geo, g), absmax);
    enc.divisor[g] = divisor_of(f32_from_f16_bits(absmax));
  }
  return enc;
}

// Applies fn(in, a, b) to every element of the view, with a and b the element's group's
// entries of two per-group arrays. Groups along rows give per-lane arrays (vectorised over
// columns); groups along columns give constants over runs of `group` elements.
template <class In, class Out, class Fn>
void map_view(const ViewGeometry& geo, const In* in, Out* out, const float* a, const float* b,
              Fn fn) {
  const auto grid_cols = static_cast<std::size_t>(geo.grid_cols());
  for (int r = 0; r < geo.rows; ++r) {
    const In* src = in + static_cast<std::size_t>(r) * geo.cols;
    Out* dst = out + static_cast<std::size_t>(r) * geo.cols;
    if (geo.along_rows) {
      const std::size_t g = static_cast<std::size_t>(r / geo.group) * grid_cols;
      for (int c = 0; c < geo.cols; ++c) dst[c] = fn(src[c], a[g + c], b[g + c]);
      continue;
    }
    for (int c0 = 0; c0 < geo.cols; c0 += geo.group) {
      const std::size_t g = static_cast<std::size_t>(r) * grid_cols + c0 / geo.group;
      const int end = std::min(geo.cols, c0 + geo.group);
      for (int c = c0; c < end; ++c) dst[c] = fn(src[c], a[g], b[g]);
    }
  }
}

struct IntEncoder {
  float max_code = 0;

  std::uint8_t operator()(float x, float zero, float divisor) const {
    const float q = std::clamp((x - zero) / divisor, 0.0f, max_code);
    return static_cast<std::uint8_t>(static_cast<int>(round_code(q)));
  }
};

struct Nf4Encoder {
  std::uint8_t operator()(float x, float /*zero*/, float divisor) const {
    const float q = x / divisor;
    int code = 0;
    for (float mid : kNf4Midpoints) code += q > mid ? 1 : 0;
    return static_cast<std::uint8_t>(code);
  }
};

struct IntDecoder {
  float operator()(std::uint8_t code, float zero, float scale) const {
    return scale * static_cast<float>(code) + zero;
  }
};

struct Nf4Decoder {
  float operator()(std::uint8_t code, float /*zero*/, float scale) const {
    return scale * kNf4Table[code];
  }
};

std::size_t storage_index(const BlockShape& shape, int t, int c) {
  if (shape.order == CodeOrder::token_major) {
    return static_cast<std::size_t>(t) * shape.channels + c;
  }
  return static_cast<std::size_t>(c) * shape.tokens + t;
}

void pack_fp16(std::span<const float> values, const QuantSpec& spec, const BlockShape& shape,
               std::byte* block) {
  std::vector<std::uint16_t> halves(values.size());
  halves_from_floats(values, halves.data());
  for (int t = 0; t < shape.tokens; ++t) {
    for (int c = 0; c < shape.channels; ++c) {
      const std::uint16_t half = halves[static_cast<std::size_t>(t) * shape.channels + c];
      if ((half & kF16ExpMask) == kF16ExpMask)
        throw_fp16_overflow(spec, shape, {t, c}, "the value");
      store_half(block, storage_index(shape, t, c), half);
    }
  }
}

void unpack_fp16(const std::byte* block, const BlockShape& shape, std::span<float> values) {
  std::vector<std::uint16_t> halves(values.size());
  for (int t = 0; t < shape.tokens; ++t) {
    for (int c = 0; c < shape.channels; ++c) {
      halves[static_cast<std::size_t>(t) * shape.channels + c] =
          load_half(block, storage_index(shape, t, c));
    }
  }
  floats_from_halves(halves, values.data());
}

}  // namespace

CpuQuantizer::CpuQuantizer(const QuantSpec& spec) : spec_(spec) {
  if (spec.group_size < 1 || spec.group_size > kMaxGroupSize) {
    throw Error(fmt::format("CpuQuantizer ({}): group size {} is outside [1, {}]",
                            to_string(spec.precision), spec.group_size, kMaxGroupSize));
  }
}

std::size_t CpuQuantizer::packed_bytes(const BlockShape& shape) const {
  return packed_layout(spec_, shape).total_bytes;
}

void CpuQuantizer::pack(std::span<const float> values, const BlockShape& shape,
                        std::span<std::byte> packed) const {
  const PackedLayout layout = packed_layout(spec_, shape);
  check_quantizer_spans("CpuQuantizer", "pack", spec_, shape, values.size(), packed.size(),
                        layout.total_bytes);
  check_finite(values, spec_, shape);
  if (spec_.precision == Precision::fp16) return pack_fp16(values, spec_, shape, packed.data());

  const ViewGeometry geo = view_geometry(spec_, shape);
  std::vector<float> transposed;
  const float* view = values.data();
  if (shape.order == CodeOrder::channel_major) {
    transposed.resize(values.size());
    transpose(values.data(), shape.tokens, shape.channels, transposed.data());
    view = transposed.data();
  }

  std::vector<float> lo(layout.n_groups);
  std::vector<float> hi(layout.n_groups);
  group_ranges(view, geo, lo.data(), hi.data());

  std::vector<std::uint8_t> codes(values.size());
  const int bits = code_bits(spec_.precision);
  if (spec_.precision == Precision::nf4) {
    const Encoding enc = nf4_encoding(lo, hi, spec_, shape, geo, layout, packed.data());
    map_view(geo, view, codes.data(), enc.zero.data(), enc.divisor.data(), Nf4Encoder{});
  } else {
    if (spec_.range == RangeFit::least_squares && bits <= 4) {
      fit_group_ranges(view, geo, static_cast<float>((1 << bits) - 1), lo.data(), hi.data());
    }
    const Encoding enc = int_encoding(lo, hi, spec_, shape, geo, layout, packed.data());
    const IntEncoder encoder{static_cast<float>((1 << bits) - 1)};
    map_view(geo, view, codes.data(), enc.zero.data(), enc.divisor.data(), encoder);
  }
  if (layout.packing == CodePacking::lanes) {
    pack_code_lanes(codes, bits, geo.rows, geo.cols, packed.first(layout.codes_bytes));
  } else {
    pack_codes(codes, bits, packed.first(layout.codes_bytes));
  }
}

void CpuQuantizer::unpack(std::span<const std::byte> packed, const BlockShape& shape,
                          std::span<float> values) const {
  const PackedLayout layout = packed_layout(spec_, shape);
  check_quantizer_spans("CpuQuantizer", "unpack", spec_, shape, values.size(), packed.size(),
                        layout.total_bytes);
  if (spec_.precision == Precision::fp16) return unpack_fp16(packed.data(), shape, values);

  std::vector<std::uint8_t> codes(values.size());
  const int bits = code_bits(spec_.precision);
  const ViewGeometry geo = view_geometry(spec_, shape);
  if (layout.packing == CodePacking::lanes) {
    unpack_code_lanes(packed.first(layout.codes_bytes), bits, geo.rows, geo.cols, codes);
  } else {
    unpack_codes(packed.first(layout.codes_bytes), bits, codes);
  }

  const bool has_zeros = spec_.precision != Precision::nf4;
  std::vector<float> zero(layout.n_groups, 0.0f);
  std::vector<float> scale(layout.n_groups);
  for (std::size_t g = 0; g < layout.n_groups; ++g) {
    const std::size_t at = stored_group(geo, g);
    scale[g] = f32_from_f16_bits(load_half(packed.data() + layout.scales_offset, at));
    if (has_zeros) zero[g] = f32_from_f16_bits(load_half(packed.data() + layout.zeros_offset, at));
  }

  const bool transposed = shape.order == CodeOrder::channel_major;
  std::vector<float> view_storage(transposed ? values.size() : 0);
  float* view = transposed ? view_storage.data() : values.data();
  if (has_zeros) {
    map_view(geo, codes.data(), view, zero.data(), scale.data(), IntDecoder{});
  } else {
    map_view(geo, codes.data(), view, zero.data(), scale.data(), Nf4Decoder{});
  }
  if (transposed) transpose(view, shape.channels, shape.tokens, values.data());
}

}  // namespace cocktail::cpu
