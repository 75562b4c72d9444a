#include <cstring>
#include <string>

#include "cocktail/error.hpp"
#include "runtime/gpu_buffer.hpp"
#include "runtime/gpu_device.hpp"

namespace cocktail::gpu {

namespace {

// "device 0 (NVIDIA H100 80GB HBM3, 1.2 GiB free of 79.1 GiB)": where an allocation failed.
std::string describe_device(int device) {
  std::string out = "device " + std::to_string(device);
  cudaDeviceProp properties{};
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  if (cudaGetDeviceProperties(&properties, device) == cudaSuccess &&
      cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
    out += std::string(" (") + properties.name + ", " + std::to_string(free_bytes) +
           " bytes free of " + std::to_string(total_bytes) + ")";
  }
  (void)cudaGetLastError();
  return out;
}

}  // namespace

GpuBuffer::GpuBuffer(std::size_t bytes, int device) : size_(bytes), device_(device) {
  if (bytes == 0) return;
  use_device(device);
  void* memory = nullptr;
  const cudaError_t status = cudaMalloc(&memory, bytes);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(
        std::string(kBackendName) + " backend: " +
        (status == cudaErrorMemoryAllocation ? "out of memory allocating" : "cannot allocate") +
        " a buffer of " + std::to_string(bytes) + " bytes on " + describe_device(device) + ": " +
        cudaGetErrorString(status));
  }
  data_ = static_cast<std::byte*>(memory);
}

GpuBuffer::~GpuBuffer() {
  // A destructor cannot report: a failure here is a device already lost, which the next call
  // that checks reports.
  if (owned_ && data_ != nullptr) (void)cudaFree(data_);
}

std::byte* device_bytes(const char* op, const char* operand, const Tensor& t) {
  const auto* buffer = dynamic_cast<const GpuBuffer*>(t.buffer);
  if (buffer == nullptr || std::strcmp(buffer->backend_, kBackendName) != 0) {
    throw Error(std::string(op) + ": " + operand + " (" + describe(t) + ") is " +
                (t.buffer ? "in another backend's memory" : "an empty view") + "; the " +
                kBackendName + " backend reads only its own buffers");
  }
  expect_inside_buffer(op, operand, t, buffer->size());
  return buffer->data() + t.offset;
}

}  // namespace cocktail::gpu
