#include <string>

#include "runtime/gpu_check.hpp"
#include "runtime/gpu_device.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

namespace {

std::string arch_name(const cudaDeviceProp& properties) {
#if defined(COCKTAIL_GPU_HIP)
  return properties.gcnArchName;
#else
  return "sm_" + std::to_string(properties.major) + std::to_string(properties.minor);
#endif
}

// HIP 5.2 has no opt-in limit: a block may use all of sharedMemPerBlock from the start.
int max_shared_per_block(const cudaDeviceProp& properties) {
#if defined(COCKTAIL_GPU_HIP)
  return int(properties.sharedMemPerBlock);
#else
  return int(properties.sharedMemPerBlockOptin);
#endif
}

}  // namespace

GpuDevice read_device(int index) {
  cudaDeviceProp properties{};
  COCKTAIL_GPU_CHECK(cudaGetDeviceProperties(&properties, index));
  GpuDevice device;
  device.index = index;
  device.name = properties.name;
  device.arch = arch_name(properties);
  device.memory_bytes = properties.totalGlobalMem;
  device.multiprocessors = properties.multiProcessorCount;
  device.l2_bytes = std::size_t(properties.l2CacheSize);
  device.max_shared_per_block = max_shared_per_block(properties);
  return device;
}

void use_device(const GpuDevice& device) {
  use_device(device.index);
}

void use_device(int index) {
  int current = -1;
  COCKTAIL_GPU_CHECK(cudaGetDevice(&current));
  if (current != index) COCKTAIL_GPU_CHECK(cudaSetDevice(index));
}

}  // namespace cocktail::gpu
