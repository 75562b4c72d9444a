#pragma once

// Row norms on device floats [rows][cols]: one block per row, one launch, checked. `out` may be
// `x` (in place).

#include <cstdint>

#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

// out[r] = x[r] / sqrt(mean(x[r]²) + eps) · weight.
void launch_rms_norm(cudaStream_t stream, const float* x, const float* weight, std::int64_t rows,
                     std::int64_t cols, float eps, float* out);

// out[r] = (x[r] − mean) / sqrt(var + eps) · weight + bias, with the biased variance taken
// around the mean (a second pass), which keeps it for rows far from zero.
void launch_layer_norm(cudaStream_t stream, const float* x, const float* weight, const float* bias,
                       std::int64_t rows, std::int64_t cols, float eps, float* out);

}  // namespace cocktail::gpu
