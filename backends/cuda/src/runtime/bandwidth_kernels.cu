#include "runtime/bandwidth_kernels.hpp"
#include "runtime/gpu_check.hpp"

namespace cocktail::gpu {

namespace {

__device__ inline void fold(uint4& acc, const uint4& v) {
  acc.x ^= v.x;
  acc.y ^= v.y;
  acc.z ^= v.z;
  acc.w ^= v.w;
}

// A grid-stride pass over n 16-byte words, four loads in flight per thread before the first
// use.
__global__ void __launch_bounds__(kReadThreads)
    read_all(const uint4* __restrict__ data, std::size_t n, unsigned never, unsigned* sink) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = data[i];
    const uint4 b = data[i + stride];
    const uint4 c = data[i + 2 * stride];
    const uint4 d = data[i + 3 * stride];
    fold(acc, a);
    fold(acc, b);
    fold(acc, c);
    fold(acc, d);
  }
  for (; i < n; i += stride) fold(acc, data[i]);
  const unsigned checksum = acc.x ^ acc.y ^ acc.z ^ acc.w;
  if (checksum == never) *sink = checksum;
}

}  // namespace

void launch_read_all(const std::byte* data, std::size_t bytes, unsigned never, unsigned* sink,
                     int blocks, cudaStream_t stream) {
  read_all<<<blocks, kReadThreads, 0, stream>>>(reinterpret_cast<const uint4*>(data), bytes / 16,
                                                never, sink);
  COCKTAIL_GPU_CHECK_LAUNCH("read_all");
}

int read_all_blocks_per_multiprocessor() {
  int blocks = 0;
  COCKTAIL_GPU_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, read_all, kReadThreads, 0));
  return blocks;
}

cudaError_t probe_kernel_image() {
  cudaFuncAttributes attributes{};
  const cudaError_t status = cudaFuncGetAttributes(&attributes, read_all);
  if (status != cudaSuccess) (void)cudaGetLastError();
  return status;
}

}  // namespace cocktail::gpu
