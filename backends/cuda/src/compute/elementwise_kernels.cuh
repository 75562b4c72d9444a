#pragma once

// The elementwise operations of the Llama and BERT forwards, and the embedding lookup, on device
// memory: one launch each, checked.

#include <cstdint>

#include "cocktail/compute.hpp"
#include "gpu_common/weight_layout.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

// out[i] = row ids[i] of `table` as floats, for n ids. An id outside the table's rows gives a
// row of NaN (the ids are on the device: the host cannot check them without waiting), never a
// read outside the table.
void launch_embedding(cudaStream_t stream, const WeightRows& table, const int* ids, std::int64_t n,
                      float* out);

// Rotates the pairs `style` forms in x [n][n_heads · head_dim] in place, pair i by
// positions[t] · base^(−2i/head_dim).
void launch_rope(cudaStream_t stream, float* x, const int* positions, std::int64_t n, int n_heads,
                 int head_dim, float base, RopeStyle style);

// gate = silu(gate) · up.
void launch_silu_mul(cudaStream_t stream, float* gate, const float* up, std::int64_t count);

// x += y.
void launch_add(cudaStream_t stream, float* x, const float* y, std::int64_t count);

// x = x · Φ(x), the erf form.
void launch_gelu(cudaStream_t stream, float* x, std::int64_t count);

// x[r] += bias for each of the rows of x [rows][cols].
void launch_add_bias(cudaStream_t stream, float* x, const float* bias, std::int64_t rows,
                     std::int64_t cols);

}  // namespace cocktail::gpu
