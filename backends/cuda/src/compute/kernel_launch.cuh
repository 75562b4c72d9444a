#pragma once

// How the compute kernels start: one checked launch function, and the block's dynamic shared
// memory. The CPU tests swap this header (tests/support/host_shim) for one that runs a
// kernel's threads on the host.

#include <cstddef>

#include "runtime/gpu_check.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

// kernel<<<grid, block, shared_bytes, stream>>>(args...), then the launch's error, naming
// `name`, as an Error.
template <class... Params, class... Args>
void launch_kernel(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block,
                   std::size_t shared_bytes, cudaStream_t stream, const Args&... args) {
  kernel<<<grid, block, shared_bytes, stream>>>(args...);
  check_launch(name, __FILE__, __LINE__);
}

// The launch's shared_bytes of dynamic shared memory.
__device__ inline float* dynamic_shared_floats() {
  extern __shared__ float dynamic_shared[];
  return dynamic_shared;
}

}  // namespace cocktail::gpu
