#pragma once

// Stands in for backends/cuda/src/compute/kernel_launch.cuh in the host tests: a launch runs
// the grid's blocks one after another, each block's threads as host threads
// (gpu_emulation::run in vendor/gpu_runtime.hpp here).

#include <cstddef>

#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

template <class... Params, class... Args>
void launch_kernel(const char* /*name*/, void (*kernel)(Params...), dim3 grid, dim3 block,
                   std::size_t shared_bytes, cudaStream_t /*stream*/, const Args&... args) {
  gpu_emulation::run(grid, block, shared_bytes, [&] { kernel(Params(args)...); });
}

inline float* dynamic_shared_floats() {
  return gpu_emulation::block().dynamic_shared.data();
}

}  // namespace cocktail::gpu
