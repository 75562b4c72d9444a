#pragma once

#include <cstdint>

#include "cocktail/compute.hpp"

namespace cocktail::cpu {

// The elementwise kernels of CpuCompute, each over a range so the caller can split the work
// across threads. Shapes are checked by the caller.

// out[r] = x[r] / sqrt(mean(x[r]²) + eps) · weight for rows r in [row_begin, row_end) of `dim`
// elements; out may be x.
void rms_norm_rows(const float* x, const float* weight, std::int64_t dim, float eps, float* out,
                   std::int64_t row_begin, std::int64_t row_end);

// Rotates the pairs `style` forms in tokens [token_begin, token_end) of
// x[tokens][n_heads][head_dim], pair i by positions[t] · base^(-2i / head_dim); head_dim is even.
void rope_tokens(float* x, const std::int32_t* positions, int n_heads, int head_dim, float base,
                 RopeStyle style, std::int64_t token_begin, std::int64_t token_end);

// gate[i] = silu(gate[i]) · up[i] for i in [begin, end).
void silu_mul_range(float* gate, const float* up, std::int64_t begin, std::int64_t end);

// x[i] += y[i] for i in [begin, end).
void add_range(float* x, const float* y, std::int64_t begin, std::int64_t end);

// out[r] = (x[r] - mean) / sqrt(var + eps) · weight + bias for rows r in [row_begin, row_end)
// of `dim` elements (biased variance); out may be x.
void layer_norm_rows(const float* x, const float* weight, const float* bias, std::int64_t dim,
                     float eps, float* out, std::int64_t row_begin, std::int64_t row_end);

// x[i] = x[i] · Φ(x[i]) (GELU, erf form) for i in [begin, end).
void gelu_range(float* x, std::int64_t begin, std::int64_t end);

// x[r][:] += bias for rows r in [row_begin, row_end) of `dim` elements.
void add_bias_rows(float* x, const float* bias, std::int64_t dim, std::int64_t row_begin,
                   std::int64_t row_end);

}  // namespace cocktail::cpu
