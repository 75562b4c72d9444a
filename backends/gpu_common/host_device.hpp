#pragma once

// COCKTAIL_HOST_DEVICE marks a function that runs on the host and on the device: CUDA and HIP
// compile it for both, the host compiler (the Vulkan backend, the tests) as plain C++.

#if defined(__CUDACC__) || defined(__HIPCC__)
#define COCKTAIL_HOST_DEVICE __host__ __device__
#else
#define COCKTAIL_HOST_DEVICE
#endif
