#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace cocktail::testing {

// BERT's LayerNorm in float64, row by row (the biased variance, from the mean, not E[x²] -
// mean²): `normed` before the weight and bias, `want` after.
struct LayerNormReference {
  std::vector<double> normed, want;

  // What float32 arithmetic may be off by at element `at` of weight `weight`, where the row's
  // inputs carry a relative rounding of `relative` (more for a row far from zero).
  double tolerance(std::size_t at, double weight, double relative) const {
    return relative * std::abs(weight) * (std::abs(normed[at]) + 1.0) + 1e-6;
  }
};

inline LayerNormReference layer_norm_reference(std::span<const float> x, std::int64_t dim,
                                               std::span<const float> weight,
                                               std::span<const float> bias, double eps) {
  LayerNormReference ref{std::vector<double>(x.size()), std::vector<double>(x.size())};
  for (std::size_t row = 0; row < x.size(); row += std::size_t(dim)) {
    double mean = 0.0, variance = 0.0;
    for (std::int64_t j = 0; j < dim; ++j) mean += x[row + std::size_t(j)];
    mean /= double(dim);
    for (std::int64_t j = 0; j < dim; ++j) {
      const double d = x[row + std::size_t(j)] - mean;
      variance += d * d;
    }
    const double inverse = 1.0 / std::sqrt(variance / double(dim) + eps);
    for (std::int64_t j = 0; j < dim; ++j) {
      const std::size_t at = row + std::size_t(j);
      ref.normed[at] = (x[at] - mean) * inverse;
      ref.want[at] = ref.normed[at] * weight[std::size_t(j)] + bias[std::size_t(j)];
    }
  }
  return ref;
}

}  // namespace cocktail::testing
