#pragma once

// Float64 references of the conformance suite, computed from the definitions in the public
// headers (quant_spec.hpp, attention_executor.hpp), never from a backend's code.

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "cocktail/kv_store.hpp"
#include "cocktail/precision.hpp"

namespace cocktail::conformance {

// x rounded to the nearest FP16 value, ties to even (normal and subnormal range).
double round_to_half(double x);

// The 16 NF4 levels (QLoRA's table), from -1 to 1.
extern const std::array<double, 16> kNf4Levels;

// The values a precision may decode x to: within `radius` of `center`.
struct Allowed {
  double center = 0.0;
  double radius = 0.0;

  bool admits(double decoded) const { return std::abs(decoded - center) <= radius; }
};

// What precision p may decode x to, where x's group spans [lo, hi] and integer ranges are fit
// by min_max (quant_spec.hpp). FP16 is x rounded to nearest even, exactly. The integer
// precisions: with M = 2^bits - 1 and the scale (hi - lo)/M and zero lo each rounded to FP16,
// rounding to a code costs half a step, a clamped code what the rounded zero and top level
// (zero + M·scale) miss of lo and hi, and float32 arithmetic a little more. NF4: half the
// largest gap of its table times the group's absmax (rounded to FP16), plus that rounding,
// since a value beyond the rounded absmax decodes to ±absmax.
Allowed allowed_decoding(Precision p, double x, double lo, double hi);

// The squared error of an integer precision's min_max fit of one group, with FP16 scale and
// zero: what a least_squares fit, which starts from it and only improves, must not exceed.
double min_max_squared_error(Precision p, std::span<const double> group);

// A snapshot's rows sorted back into token order.
KvHeadSnapshot in_token_order(const KvHeadSnapshot& snapshot, int head_dim);

// softmax(scale · q·k_t) over tokens t < visible of a token-ordered snapshot.
std::vector<double> softmax_weights(const KvHeadSnapshot& ordered, std::span<const float> q,
                                    double scale, std::int64_t visible);
// Σ_t softmax_t · v_t over the same tokens: one query head's attention output.
std::vector<double> attention_reference(const KvHeadSnapshot& ordered, std::span<const float> q,
                                        double scale, std::int64_t visible);

// The largest difference from `want`, relative to want's largest magnitude.
double relative_error(std::span<const float> got, std::span<const double> want);

}  // namespace cocktail::conformance
