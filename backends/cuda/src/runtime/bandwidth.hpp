#pragma once

#include <cstddef>

#include "runtime/gpu_device.hpp"

namespace cocktail::gpu {

// Bytes per second at which `device` reads a buffer of `bytes` (rounded up to 16 bytes): the
// median of several timed reads after warm-up ones, each timed with events.
double measure_read_bandwidth(const GpuDevice& device, std::size_t bytes);

}  // namespace cocktail::gpu
