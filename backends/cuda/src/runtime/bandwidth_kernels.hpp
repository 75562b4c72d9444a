#pragma once

#include <cstddef>

#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

// Threads of a block of the read kernel.
inline constexpr int kReadThreads = 256;

// Enqueues one read of `bytes` (a multiple of 16) at `data` with 16-byte loads, on `blocks`
// blocks. `sink` (one device word) is written only if the data's checksum equals `never`, which
// the caller makes impossible; the compiler cannot know that, so every load stays.
void launch_read_all(const std::byte* data, std::size_t bytes, unsigned never, unsigned* sink,
                     int blocks, cudaStream_t stream);

// Blocks of the read kernel one multiprocessor holds at once.
int read_all_blocks_per_multiprocessor();

// Whether this build has device code for the current device: the runtime's answer for one of
// its kernels (cudaErrorNoKernelImageForDevice or cudaErrorInvalidDeviceFunction when not).
cudaError_t probe_kernel_image();

}  // namespace cocktail::gpu
