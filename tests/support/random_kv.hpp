#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "cocktail/kv_shape.hpp"
#include "cocktail/session.hpp"

namespace cocktail::testing {

// `n` normally distributed floats of standard deviation `scale`.
inline std::vector<float> random_floats(std::size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> out(n);
  for (float& x : out) x = normal(rng);
  return out;
}

// Appends `n` tokens of random K and V to every layer, as a host's forward pass would.
inline void append_random(Session& session, const KvShape& shape, std::int64_t n,
                          std::mt19937& rng) {
  for (int layer = 0; layer < shape.n_layers; ++layer) {
    const std::size_t floats = std::size_t(n) * shape.token_floats();
    session.append(layer, random_floats(floats, rng), random_floats(floats, rng), n);
  }
}

}  // namespace cocktail::testing
