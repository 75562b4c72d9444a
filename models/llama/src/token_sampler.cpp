#include "cocktail/models/token_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace cocktail::models {

TokenSampler::TokenSampler(double temperature, double top_p, std::uint64_t seed)
    : temperature_(temperature), top_p_(top_p), rng_(seed) {}

TokenId TokenSampler::next(std::span<const float> logits) {
  const auto best = std::max_element(logits.begin(), logits.end());
  if (temperature_ <= 0.0) return TokenId(best - logits.begin());
  std::vector<TokenId> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](TokenId a, TokenId b) { return logits[std::size_t(a)] > logits[std::size_t(b)]; });
  std::vector<double> weights;
  double total = 0.0;
  for (const TokenId id : order) {
    weights.push_back(std::exp((double(logits[std::size_t(id)]) - double(*best)) / temperature_));
    total += weights.back();
  }
  // Keep the most likely tokens until their mass reaches top_p.
  double kept = 0.0;
  std::size_t n = 0;
  while (n < weights.size() && kept < top_p_ * total) kept += weights[n++];
  std::discrete_distribution<std::size_t> pick(weights.begin(), weights.begin() + long(n));
  return order[pick(rng_)];
}

}  // namespace cocktail::models
