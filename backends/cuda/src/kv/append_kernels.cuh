#pragma once

// The store's append: one layer's new K and V rows into its FP16 tail.

#include <cstdint>

#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

// Where an append writes: the tail of every layer × KV head (kv/store_view.hpp's TailView), the
// layer, and the first tail row of the new tokens.
struct AppendTarget {
  __half* keys = nullptr;
  __half* values = nullptr;
  std::int64_t capacity = 0;
  int layer = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  std::int64_t first_row = 0;
};

// k and v are f32 [n_tokens][n_kv_heads · head_dim] in device memory, rounded to FP16 (nearest
// even) into rows [first_row, first_row + n_tokens) of each of the layer's heads.
void launch_append(cudaStream_t stream, const AppendTarget& to, const float* k, const float* v,
                   std::int64_t n_tokens);

}  // namespace cocktail::gpu
