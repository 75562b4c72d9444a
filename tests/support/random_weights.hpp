#pragma once

// Random weight matrices as a GGUF file stores them, for the tests of every backend's matmul and
// weight layout.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "cocktail/dequantize.hpp"
#include "cocktail/float16.hpp"

namespace cocktail::testing {

using Bytes = std::vector<std::byte>;

// Every weight type a model may hold.
constexpr TensorType kAllWeightTypes[] = {TensorType::f32,  TensorType::f16,  TensorType::bf16,
                                          TensorType::q8_0, TensorType::q4_0, TensorType::q4_1,
                                          TensorType::q4_k, TensorType::q6_k};

// Writes x as an FP16 at byte `at` of b.
inline void put_half(Bytes& b, std::size_t at, double x) {
  const auto bits = std::bit_cast<std::uint16_t>(static_cast<Float16>(x));
  std::memcpy(b.data() + at, &bits, 2);
}

// A random rows x cols matrix: floats in (-1, 1), or random code bytes whose FP16 scale fields
// are then set to small values (and the Q4_1 offset to about -8 steps, so weights take both
// signs).
inline Bytes random_weights(TensorType type, std::int64_t rows, std::int64_t cols,
                            std::mt19937& rng) {
  Bytes b(row_bytes(type, cols) * std::size_t(rows));
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::uniform_real_distribution<double> scale(0.002, 0.03);
  if (info(type).block_elements == 1) {
    for (std::size_t i = 0; i < std::size_t(rows * cols); ++i) {
      const auto v = float(value(rng));
      if (type == TensorType::f32) {
        std::memcpy(b.data() + 4 * i, &v, 4);
      } else if (type == TensorType::f16) {
        put_half(b, 2 * i, v);
      } else {
        const auto bits = std::uint16_t(std::bit_cast<std::uint32_t>(v) >> 16);
        std::memcpy(b.data() + 2 * i, &bits, 2);
      }
    }
    return b;
  }
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::byte& x : b) x = std::byte(byte(rng));
  for (std::size_t at = 0; at < b.size(); at += std::size_t(info(type).block_bytes)) {
    switch (type) {
      case TensorType::q8_0:
      case TensorType::q4_0:
        put_half(b, at, scale(rng));
        break;
      case TensorType::q4_1:
        put_half(b, at, scale(rng));
        put_half(b, at + 2, -8 * scale(rng));
        break;
      case TensorType::q4_k:  // d, dmin
        put_half(b, at, scale(rng) / 32);
        put_half(b, at + 2, scale(rng) / 4);
        break;
      case TensorType::q6_k:  // d, after the codes and the 16 scales
        put_half(b, at + 208, scale(rng) / 64);
        break;
      default:
        break;
    }
  }
  return b;
}

}  // namespace cocktail::testing
