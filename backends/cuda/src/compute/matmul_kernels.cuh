#pragma once

// y[n][rows] = x[n][cols] · wᵀ on converted weights (gpu_common/weight_layout.hpp), in float32
// arithmetic: a GEMV that reads each weight once for up to kGemvMaxTokens tokens (decode), a
// tiled GEMM for more (prefill). Launches checked.

#include <cstdint>
#include <span>

#include "gpu_common/weight_layout.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

inline constexpr std::int64_t kGemvMaxTokens = 8;
// Products of one input that one GEMV launch computes together (q, k and v; gate and up).
inline constexpr int kMaxGemvTargets = 4;

// One product: y, device floats [n][w.rows].
struct MatmulTarget {
  WeightRows w;
  float* y;
};

// Every target's y = x · wᵀ, x device floats [n][cols] (the same cols for all), overlapping no
// y. Up to kGemvMaxTokens tokens, each run of up to kMaxGemvTargets targets of one format is
// one launch; more tokens take a GEMM launch per target.
void launch_matmul(cudaStream_t stream, std::span<const MatmulTarget> targets, const float* x,
                   std::int64_t n);

}  // namespace cocktail::gpu
