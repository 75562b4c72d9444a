#pragma once

#include <cstddef>

namespace cocktail::cpu {

inline constexpr std::size_t kCacheLine = 64;

// n rounded up to a multiple of `to`.
constexpr std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

}  // namespace cocktail::cpu
