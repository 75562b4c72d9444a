#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cocktail/compute.hpp"

namespace cocktail::testing {

// Where pair i of a head lies, from the head's start: Compute::rope's definition.
struct RopePair {
  std::size_t first, second;
};
inline RopePair rope_pair(RopeStyle style, int head_dim, int i) {
  const auto at = std::size_t(i);
  if (style == RopeStyle::halves) return {at, at + std::size_t(head_dim / 2)};
  return {2 * at, 2 * at + 1};
}

// Compute::rope in float64 on x[n][n_heads · head_dim], one position per row.
inline std::vector<double> rope_reference(std::span<const float> x,
                                          std::span<const std::int32_t> positions, int n_heads,
                                          int head_dim, double base, RopeStyle style) {
  std::vector<double> out(x.begin(), x.end());
  const std::size_t width = std::size_t(n_heads) * std::size_t(head_dim);
  for (std::size_t t = 0; t < positions.size(); ++t) {
    for (int h = 0; h < n_heads; ++h) {
      const std::size_t head = t * width + std::size_t(h) * std::size_t(head_dim);
      for (int i = 0; i < head_dim / 2; ++i) {
        const double theta = positions[t] * std::pow(base, -2.0 * i / head_dim);
        const auto [a, b] = rope_pair(style, head_dim, i);
        const double x0 = x[head + a], x1 = x[head + b];
        out[head + a] = x0 * std::cos(theta) - x1 * std::sin(theta);
        out[head + b] = x0 * std::sin(theta) + x1 * std::cos(theta);
      }
    }
  }
  return out;
}

}  // namespace cocktail::testing
