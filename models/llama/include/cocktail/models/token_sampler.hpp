#pragma once

#include <cstdint>
#include <random>
#include <span>

#include "cocktail/models/vocabulary.hpp"

namespace cocktail::models {

// Picks the next token from logits: the arg-max when temperature is 0, else a draw from the
// softmax at that temperature restricted to the smallest set of tokens whose mass reaches top_p.
class TokenSampler {
 public:
  TokenSampler(double temperature, double top_p, std::uint64_t seed);
  TokenId next(std::span<const float> logits);

 private:
  double temperature_;
  double top_p_;
  std::mt19937_64 rng_;
};

}  // namespace cocktail::models
