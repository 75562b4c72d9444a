#pragma once

#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

// Throws cocktail::Error naming `call`, where it was made and the runtime's own message unless
// `status` is cudaSuccess. Out of memory, a lost device, a kernel fault: never a crash.
void check(cudaError_t status, const char* call, const char* file, int line);

// Throws the Error of the last kernel launch that failed to start (a bad configuration, no code
// for this device), naming `kernel`.
void check_launch(const char* kernel, const char* file, int line);

}  // namespace cocktail::gpu

#define COCKTAIL_GPU_CHECK(call) ::cocktail::gpu::check((call), #call, __FILE__, __LINE__)
#define COCKTAIL_GPU_CHECK_LAUNCH(kernel) ::cocktail::gpu::check_launch(kernel, __FILE__, __LINE__)
