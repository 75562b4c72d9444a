// Quantizer conformance: pack and unpack round trips of every precision and layout, each value
// against the bound quant_spec.hpp's definition allows, computed here in float64.

#include "cocktail/quantizer.hpp"

#include <algorithm>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "reference.hpp"
#include "support/random_kv.hpp"

namespace cocktail::conformance {
namespace {

class QuantizerConformance : public BackendTest {};
COCKTAIL_CONFORMANCE_SUITE(QuantizerConformance);

enum class Data { gaussian, outlier_channel, constant };
constexpr Data kAllData[] = {Data::gaussian, Data::outlier_channel, Data::constant};

std::string describe(const QuantSpec& spec, const BlockShape& shape, Data data) {
  const char* data_names[] = {"gaussian", "outlier channel", "constant"};
  return std::string(to_string(spec.precision)) + " per-" + std::string(to_string(spec.axis)) +
         " groups of " + std::to_string(spec.group_size) + " " +
         std::string(to_string(spec.range)) + ", " + std::to_string(shape.tokens) + "x" +
         std::to_string(shape.channels) +
         (shape.order == CodeOrder::token_major ? " token-major, " : " channel-major, ") +
         data_names[int(data)];
}

// A block [tokens][channels]: normal values, one channel far larger and offset, or one value.
std::vector<float> make_block(Data data, const BlockShape& shape, std::mt19937& rng) {
  std::vector<float> v = testing::random_floats(std::size_t(shape.tokens) * shape.channels, rng);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (data == Data::constant) v[i] = 0.3f;
    if (data == Data::outlier_channel && i % std::size_t(shape.channels) == 3) {
      v[i] = 20.0f + 80.0f * v[i];
    }
  }
  return v;
}

// The groups QuantSpec defines on a block: per_channel, one channel over group_size
// consecutive tokens from token 0; per_token, one token over group_size consecutive channels
// from channel 0.
struct Groups {
  std::vector<std::size_t> of;               // the group of each element, [token][channel]
  std::vector<std::vector<double>> members;  // each group's values
};

Groups group_block(const std::vector<float>& values, const QuantSpec& spec,
                   const BlockShape& shape) {
  const int g = spec.group_size;
  const bool per_channel = spec.axis == QuantAxis::per_channel;
  const auto per_row = std::size_t(per_channel ? shape.channels : (shape.channels + g - 1) / g);
  const auto rows = std::size_t(per_channel ? (shape.tokens + g - 1) / g : shape.tokens);
  Groups groups{std::vector<std::size_t>(values.size()),
                std::vector<std::vector<double>>(rows * per_row)};
  for (int t = 0; t < shape.tokens; ++t) {
    for (int c = 0; c < shape.channels; ++c) {
      const std::size_t group = per_channel ? std::size_t(t / g) * per_row + std::size_t(c)
                                            : std::size_t(t) * per_row + std::size_t(c / g);
      const std::size_t at = std::size_t(t) * std::size_t(shape.channels) + std::size_t(c);
      groups.of[at] = group;
      groups.members[group].push_back(values[at]);
    }
  }
  return groups;
}

// The fewest bytes that hold a block: its codes, and per group an FP16 scale and zero
// (integers) or an FP16 absmax (NF4).
std::size_t least_packed_bytes(Precision p, std::size_t n_values, std::size_t n_groups) {
  const std::size_t codes = n_values * std::size_t(code_bits(p)) / 8;
  if (p == Precision::fp16) return codes;
  return codes + n_groups * (p == Precision::nf4 ? 2 : 4);
}

// Packs `values` into buffers filled with two different bytes, one cache line longer than
// packed_bytes: pack must write every byte up to packed_bytes (the two copies then agree) and
// none after it. Returns packed_bytes and what unpacking exactly that many bytes gives.
struct RoundTrip {
  std::size_t packed_bytes = 0;
  std::vector<float> decoded;
};

RoundTrip round_trip(const Quantizer& quantizer, const std::vector<float>& values,
                     const BlockShape& shape) {
  constexpr std::size_t kGuard = 64;
  RoundTrip r{quantizer.packed_bytes(shape), std::vector<float>(values.size())};
  std::vector<std::byte> zeros(r.packed_bytes + kGuard, std::byte{0x00});
  std::vector<std::byte> ones(r.packed_bytes + kGuard, std::byte{0xFF});
  quantizer.pack(values, shape, zeros);
  quantizer.pack(values, shape, ones);
  const auto end = std::ptrdiff_t(r.packed_bytes);
  EXPECT_TRUE(std::equal(zeros.begin(), zeros.begin() + end, ones.begin()))
      << "pack left bytes below packed_bytes = " << r.packed_bytes << " unwritten";
  EXPECT_TRUE(
      std::all_of(zeros.begin() + end, zeros.end(),
                  [](std::byte b) { return b == std::byte{0x00}; }) &&
      std::all_of(ones.begin() + end, ones.end(), [](std::byte b) { return b == std::byte{0xFF}; }))
      << "pack wrote past packed_bytes = " << r.packed_bytes;
  quantizer.unpack(std::span(zeros).first(r.packed_bytes), shape, r.decoded);
  return r;
}

void check_round_trip(const Quantizer& quantizer, const BlockShape& shape,
                      const std::vector<float>& values) {
  const QuantSpec& spec = quantizer.spec();
  const RoundTrip r = round_trip(quantizer, values, shape);
  const Groups groups = group_block(values, spec, shape);
  EXPECT_GE(r.packed_bytes,
            least_packed_bytes(spec.precision, values.size(), groups.members.size()));

  // A least-squares fit may clip outliers, so only its groups' squared errors are bounded.
  const bool fitted = spec.range == RangeFit::least_squares &&
                      (spec.precision == Precision::int4 || spec.precision == Precision::int2);
  if (fitted) {
    std::vector<double> error(groups.members.size(), 0.0);
    for (std::size_t i = 0; i < values.size(); ++i) {
      error[groups.of[i]] +=
          (double(r.decoded[i]) - values[i]) * (double(r.decoded[i]) - values[i]);
    }
    Failures worse;
    for (std::size_t g = 0; g < error.size(); ++g) {
      // FP16 rounding of the fitted scale and zero may cost a little of the fit's gain.
      const double limit =
          min_max_squared_error(spec.precision, groups.members[g]) * (1 + 0x1p-7) + 1e-12;
      worse.add(error[g] <= limit, [&] {
        return "group " + std::to_string(g) + ": squared error " + std::to_string(error[g]) +
               " > the min/max fit's " + std::to_string(limit);
      });
    }
    EXPECT_EQ(worse.count, 0) << worse.first;
    return;
  }
  Failures outside;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::vector<double>& group = groups.members[groups.of[i]];
    const auto [lo, hi] = std::minmax_element(group.begin(), group.end());
    const Allowed allowed = allowed_decoding(spec.precision, values[i], *lo, *hi);
    outside.add(allowed.admits(r.decoded[i]), [&] {
      return "token " + std::to_string(i / std::size_t(shape.channels)) + " channel " +
             std::to_string(i % std::size_t(shape.channels)) + ": " + std::to_string(values[i]) +
             " decoded to " + std::to_string(r.decoded[i]) + ", allowed " +
             std::to_string(allowed.center) + " ± " + std::to_string(allowed.radius);
    });
  }
  EXPECT_EQ(outside.count, 0) << outside.first;
}

// Every precision, group size, axis, range fit, code order; blocks of one group's length and
// blocks whose last groups are partial (48 tokens, 96 channels).
TEST_P(QuantizerConformance, RoundTripsEveryPrecisionAndLayoutWithinBounds) {
  std::mt19937 rng(11);
  for (const Precision p : kAllPrecisions) {
    for (const int g : {32, 64}) {
      for (const QuantAxis axis : {QuantAxis::per_channel, QuantAxis::per_token}) {
        for (const RangeFit fit : {RangeFit::min_max, RangeFit::least_squares}) {
          const QuantSpec spec{p, g, axis, fit};
          const std::shared_ptr<Quantizer> quantizer = backend().make_quantizer(spec);
          EXPECT_EQ(quantizer->spec(), spec);
          for (const CodeOrder order : {CodeOrder::token_major, CodeOrder::channel_major}) {
            for (const BlockShape shape : {BlockShape{g, 64, order}, BlockShape{48, 96, order}}) {
              for (const Data data : kAllData) {
                SCOPED_TRACE(describe(spec, shape, data));
                check_round_trip(*quantizer, shape, make_block(data, shape, rng));
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace cocktail::conformance
