#pragma once

// Sums across the lanes of a group (kLanes = 32: a warp on NVIDIA, half a CDNA wavefront) and
// across a block.

#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

// The sum over the `width` lanes (a power of two up to kLanes) of each aligned group of
// `width`; every lane of the group gets the same value (each butterfly step adds a pair in
// both orders, which is the same float sum).
template <int width = kLanes>
__device__ inline float lanes_sum(float v) {
#pragma unroll
  for (int mask = width / 2; mask > 0; mask /= 2) {
    v += __shfl_xor_sync(0xffffffffu, v, mask, kLanes);
  }
  return v;
}

// The sum over the block (blockDim.x a multiple of kLanes, at most kLanes · kLanes); every
// thread gets the same value. `scratch` holds blockDim.x / kLanes floats in shared memory;
// calls may follow each other with the same scratch.
__device__ inline float block_sum(float v, float* scratch) {
  v = lanes_sum(v);
  const int group = int(threadIdx.x) / kLanes;
  __syncthreads();  // a previous call's readers are done with scratch
  if (int(threadIdx.x) % kLanes == 0) scratch[group] = v;
  __syncthreads();
  float total = 0.0f;
  for (int g = 0; g < int(blockDim.x) / kLanes; ++g) total += scratch[g];
  return total;
}

}  // namespace cocktail::gpu
