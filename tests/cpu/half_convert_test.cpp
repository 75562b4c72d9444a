// Bulk FP16 conversions against float64 references: every half decodes to its exact value, and
// floats round to the nearest half, ties to even, at every length (vector body and scalar tail).

#include "quant/half_convert.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace cocktail::cpu {
namespace {

// The value of a half from its fields, in float64.
double ref_half_value(std::uint16_t bits) {
  const int sign = bits >> 15;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double magnitude = 0;
  if (exponent == 0x1f) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(double(mantissa), -24);
  } else {
    magnitude = std::ldexp(double(1024 + mantissa), exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

// Round to the nearest half, ties to even, in float64; beyond the largest half, infinity.
double ref_round_to_half(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e2 = 0;
  std::frexp(x, &e2);
  const double ulp = std::ldexp(1.0, std::max(e2 - 1, -14) - 10);
  const double rounded = std::nearbyint(x / ulp) * ulp;
  return std::abs(rounded) > 65504.0 ? std::copysign(std::numeric_limits<double>::infinity(), x)
                                     : rounded;
}

TEST(HalfConvertTest, EveryHalfWidensToItsExactValue) {
  std::vector<std::uint16_t> halves(1 << 16);
  for (std::size_t i = 0; i < halves.size(); ++i) halves[i] = std::uint16_t(i);
  std::vector<float> floats(halves.size());
  floats_from_halves(halves, floats.data());
  for (std::size_t i = 0; i < halves.size(); ++i) {
    const double expected = ref_half_value(halves[i]);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(floats[i])) << "half 0x" << std::hex << i;
    } else {
      EXPECT_EQ(double(floats[i]), expected) << "half 0x" << std::hex << i;
      EXPECT_EQ(std::signbit(floats[i]), std::signbit(expected)) << "half 0x" << std::hex << i;
    }
  }
}

TEST(HalfConvertTest, FloatsRoundToNearestEvenHalf) {
  std::vector<float> floats;
  // Exact ties between neighbouring halves, and a float either side of each, across the
  // subnormal and normal ranges, both signs.
  for (int bits = 0; bits < 0x7bff; bits += 37) {
    const double lo = ref_half_value(std::uint16_t(bits));
    const double mid = (lo + ref_half_value(std::uint16_t(bits + 1))) / 2;
    for (double x : {mid, double(std::nextafter(float(mid), 0.0f)),
                     double(std::nextafter(float(mid), 1e9f))}) {
      floats.push_back(float(x));
      floats.push_back(float(-x));
    }
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> exponent(-30.0f, 17.0f);
  for (int i = 0; i < 5000; ++i) floats.push_back(std::exp2(exponent(rng)) * (i % 2 ? 1 : -1));
  floats.insert(floats.end(), {0.0f, -0.0f, 65504.0f, 65519.0f, 65520.0f, 1e30f, -1e30f});
  std::vector<std::uint16_t> halves(floats.size());
  halves_from_floats(floats, halves.data());
  for (std::size_t i = 0; i < floats.size(); ++i) {
    const double expected = ref_round_to_half(floats[i]);
    const double got = ref_half_value(halves[i]);
    EXPECT_EQ(got, expected) << "float " << floats[i] << " (index " << i << ")";
    EXPECT_EQ(std::signbit(got), std::signbit(expected)) << "float " << floats[i];
  }
}

TEST(HalfConvertTest, EveryLengthConvertsEveryElement) {
  // Lengths around the vector width: the vector body and the scalar tail agree.
  for (std::size_t n = 0; n <= 40; ++n) {
    std::vector<float> floats(n);
    for (std::size_t i = 0; i < n; ++i) floats[i] = 0.1f * float(i) - 1.3f;
    std::vector<std::uint16_t> halves(n + 1, 0xABCD);
    halves_from_floats(floats, halves.data());
    std::vector<float> back(n + 1, -7.0f);
    floats_from_halves(std::span(halves).first(n), back.data());
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(double(back[i]), ref_round_to_half(floats[i])) << "n " << n << " index " << i;
    }
    EXPECT_EQ(halves[n], 0xABCD) << "wrote past the end at n " << n;
    EXPECT_EQ(back[n], -7.0f) << "wrote past the end at n " << n;
  }
}

}  // namespace
}  // namespace cocktail::cpu
