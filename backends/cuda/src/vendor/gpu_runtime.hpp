#pragma once

// One kernel source for CUDA and HIP. The backend is written against CUDA's runtime, warp and
// math names; a HIP build (COCKTAIL_GPU_HIP, set by backends/hip) maps them to HIP's in
// vendor/hip.hpp, as ggml's vendors/hip.h does. Include this, never cuda_runtime.h directly.

#if defined(COCKTAIL_GPU_HIP)
#include "vendor/hip.hpp"
#else
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif

namespace cocktail::gpu {

#if defined(COCKTAIL_GPU_HIP)
inline constexpr const char* kBackendName = "hip";
inline constexpr const char* kRuntimeName = "HIP";
#else
inline constexpr const char* kBackendName = "cuda";
inline constexpr const char* kRuntimeName = "CUDA";
#endif

// Kernels reduce over groups of 32 lanes with __shfl_xor_sync(..., width 32), which is a whole
// warp on NVIDIA and RDNA (gfx1030) and half a wavefront on CDNA (gfx90a): block sizes are
// multiples of 64 so both fit.
inline constexpr int kLanes = 32;

}  // namespace cocktail::gpu
