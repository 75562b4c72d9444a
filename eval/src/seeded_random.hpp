#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace cocktail::eval {

// The standard fixes mt19937_64's output but neither the distributions' nor std::shuffle's, so
// these helpers draw with a modulo (its bias is far below anything a test could see) to give
// every platform the same cases.

// A whole number from lo to hi, both included.
inline std::uint64_t draw(std::mt19937_64& rng, std::uint64_t lo, std::uint64_t hi) {
  return lo + rng() % (hi - lo + 1);
}

// A number in [0, 1) from the top 53 bits of one draw.
inline double draw_fraction(std::mt19937_64& rng) {
  return double(rng() >> 11) * 0x1.0p-53;
}

// Fisher-Yates on draw().
template <class T>
void shuffle(std::vector<T>& items, std::mt19937_64& rng) {
  for (std::size_t i = items.size(); i > 1; --i)
    std::swap(items[i - 1], items[draw(rng, 0, i - 1)]);
}

}  // namespace cocktail::eval
