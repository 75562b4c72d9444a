#pragma once

#include <cstddef>
#include <cstdint>

namespace cocktail {

// Geometry of one sequence's K/V cache. K/V for a token of one layer are passed as
// [n_kv_heads][head_dim] floats (keys after RoPE); several tokens as
// [tokens][n_kv_heads][head_dim].
struct KvShape {
  int n_layers = 1;
  int n_kv_heads = 1;
  int head_dim = 128;

  std::size_t token_floats() const { return std::size_t(n_kv_heads) * std::size_t(head_dim); }
  // What `tokens` tokens cost in an FP16 cache: K and V, every layer, 2 bytes an element.
  std::size_t fp16_bytes(std::int64_t tokens) const {
    return std::size_t(tokens) * std::size_t(n_layers) * token_floats() * 2 * 2;
  }

  friend bool operator==(const KvShape&, const KvShape&) = default;
};

}  // namespace cocktail
