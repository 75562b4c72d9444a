#include "reference.hpp"

#include <algorithm>
#include <numeric>

namespace cocktail::conformance {
namespace {

// FP16 keeps 11 significant bits: rounding moves a value by at most 2^-11 of itself, and a
// subnormal by at most half the smallest step, 2^-25.
constexpr double kHalfRelative = 0x1p-11;
constexpr double kHalfSubnormal = 0x1p-25;
// Float32 arithmetic on the way (divisions, scale·code + zero), relative to the group's values.
constexpr double kFloatSlack = 0x1p-20;

double nf4_half_gap() {
  double gap = 0.0;
  for (std::size_t i = 0; i + 1 < kNf4Levels.size(); ++i) {
    gap = std::max(gap, kNf4Levels[i + 1] - kNf4Levels[i]);
  }
  return gap / 2;
}

int max_code(Precision p) {
  return (1 << code_bits(p)) - 1;
}

}  // namespace

const std::array<double, 16> kNf4Levels = {-1.0,
                                           -0.6961928009986877,
                                           -0.5250730514526367,
                                           -0.39491748809814453,
                                           -0.28444138169288635,
                                           -0.18477343022823334,
                                           -0.09105003625154495,
                                           0.0,
                                           0.07958029955625534,
                                           0.16093020141124725,
                                           0.24611230194568634,
                                           0.33791524171829224,
                                           0.44070982933044434,
                                           0.5626170039176941,
                                           0.7229568362236023,
                                           1.0};

double round_to_half(double x) {
  if (x == 0) return x;
  int exponent = 0;
  std::frexp(x, &exponent);  // |x| = m·2^exponent with m in [0.5, 1)
  const double ulp = std::ldexp(1.0, std::max(exponent - 1, -14) - 10);
  return std::nearbyint(x / ulp) * ulp;
}

Allowed allowed_decoding(Precision p, double x, double lo, double hi) {
  const double magnitude = std::max(std::abs(lo), std::abs(hi));
  switch (p) {
    case Precision::fp16:
      return {round_to_half(x), 0.0};
    case Precision::nf4: {
      const double absmax_error = magnitude * kHalfRelative + kHalfSubnormal;
      return {x,
              (magnitude + absmax_error) * nf4_half_gap() + absmax_error + kFloatSlack * magnitude};
    }
    default: {
      const int m = max_code(p);
      const double step = (hi - lo) / m;
      const double scale_error = step * (kHalfRelative + kFloatSlack) + kHalfSubnormal;
      const double zero_error = magnitude * kHalfRelative + kHalfSubnormal;
      return {x, (step + scale_error) / 2 + zero_error + m * scale_error +
                     kFloatSlack * (std::abs(lo) + std::abs(hi))};
    }
  }
}

double min_max_squared_error(Precision p, std::span<const double> group) {
  const auto [lo, hi] = std::minmax_element(group.begin(), group.end());
  const double m = max_code(p);
  const double zero = round_to_half(*lo);
  const double scale = round_to_half((*hi - *lo) / m);
  double error = 0.0;
  for (const double x : group) {
    const double code = scale > 0 ? std::clamp(std::nearbyint((x - zero) / scale), 0.0, m) : 0.0;
    const double decoded = scale * code + zero;
    error += (decoded - x) * (decoded - x);
  }
  return error;
}

KvHeadSnapshot in_token_order(const KvHeadSnapshot& snapshot, int head_dim) {
  std::vector<std::size_t> order(snapshot.positions.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return snapshot.positions[a] < snapshot.positions[b];
  });
  const auto dim = std::size_t(head_dim);
  KvHeadSnapshot ordered;
  for (const std::size_t row : order) {
    ordered.positions.push_back(snapshot.positions[row]);
    const auto first = std::ptrdiff_t(row * dim);
    ordered.keys.insert(ordered.keys.end(), snapshot.keys.begin() + first,
                        snapshot.keys.begin() + first + std::ptrdiff_t(dim));
    ordered.values.insert(ordered.values.end(), snapshot.values.begin() + first,
                          snapshot.values.begin() + first + std::ptrdiff_t(dim));
  }
  return ordered;
}

std::vector<double> softmax_weights(const KvHeadSnapshot& ordered, std::span<const float> q,
                                    double scale, std::int64_t visible) {
  const std::size_t dim = q.size();
  std::vector<double> w(static_cast<std::size_t>(visible));
  for (std::size_t t = 0; t < w.size(); ++t) {
    double dot = 0.0;
    for (std::size_t d = 0; d < dim; ++d) dot += double(q[d]) * ordered.keys[t * dim + d];
    w[t] = scale * dot;
  }
  const double max = *std::max_element(w.begin(), w.end());
  double sum = 0.0;
  for (double& x : w) sum += x = std::exp(x - max);
  for (double& x : w) x /= sum;
  return w;
}

std::vector<double> attention_reference(const KvHeadSnapshot& ordered, std::span<const float> q,
                                        double scale, std::int64_t visible) {
  const std::size_t dim = q.size();
  const std::vector<double> w = softmax_weights(ordered, q, scale, visible);
  std::vector<double> out(dim, 0.0);
  for (std::size_t t = 0; t < w.size(); ++t) {
    for (std::size_t d = 0; d < dim; ++d) out[d] += w[t] * ordered.values[t * dim + d];
  }
  return out;
}

double relative_error(std::span<const float> got, std::span<const double> want) {
  double error = 0.0, magnitude = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double difference = std::abs(double(got[i]) - want[i]);
    error = std::max(error, std::isnan(difference) ? INFINITY : difference);
    magnitude = std::max(magnitude, std::abs(want[i]));
  }
  return error / magnitude;
}

}  // namespace cocktail::conformance
