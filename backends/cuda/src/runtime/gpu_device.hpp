#pragma once

#include <cstddef>
#include <string>

namespace cocktail::gpu {

// What the kernels' launch choices need to know of the device they run on, read once when the
// backend is made.
struct GpuDevice {
  int index = 0;
  std::string name;
  std::string arch;  // "sm_90", "gfx90a:sramecc+:xnack-": what code it runs
  std::size_t memory_bytes = 0;
  int multiprocessors = 1;       // SMs (CUs on AMD): work is split to fill them
  std::size_t l2_bytes = 0;      // benchmarks flush it between timed runs
  int max_shared_per_block = 0;  // bytes of shared memory a block may opt into
};

// Device `index` as the runtime describes it (cudaGetDeviceProperties), which makes no context.
// An Error with the runtime's message when it cannot.
GpuDevice read_device(int index);

// Makes `device` the calling thread's current device: every entry point that launches work or
// allocates calls it first, so a host thread that last used another GPU is safe.
void use_device(const GpuDevice& device);
void use_device(int index);

}  // namespace cocktail::gpu
