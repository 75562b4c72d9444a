#include "kv/tile_codes.cuh"
#include "quant/quantize_block.cuh"
#include "quant/quantizer_kernels.cuh"
#include "runtime/gpu_check.hpp"

namespace cocktail::gpu {
namespace {

constexpr int kThreads = 256;

// Floats [tokens][channels], as the Quantizer interface gives them.
struct FloatRows {
  const float* values;
  int channels;

  __device__ float operator()(int token, int channel) const {
    return values[std::size_t(token) * std::size_t(channels) + std::size_t(channel)];
  }
  __device__ unsigned long long site(int token, int channel) const {
    return static_cast<unsigned long long>(token) * static_cast<unsigned long long>(channels) +
           static_cast<unsigned long long>(channel);
  }
};

__global__ void pack_kernel(BlockFormat f, RangeFit fit, const float* values, std::byte* packed,
                            QuantizeFault* fault) {
  quantize_block(f, fit, FloatRows{values, f.head_dim}, packed, fault);
}

__global__ void unpack_kernel(BlockFormat f, const std::byte* packed, float* values) {
  const std::size_t n = std::size_t(f.tokens) * std::size_t(f.head_dim);
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    values[i] =
        dequantize(f, packed, int(i / std::size_t(f.head_dim)), int(i % std::size_t(f.head_dim)));
  }
}

}  // namespace

void launch_pack(cudaStream_t stream, const BlockFormat& f, RangeFit fit, const float* values,
                 std::byte* packed, QuantizeFault* fault) {
  if (f.tokens == 0 || f.head_dim == 0) return;
  // One thread block: its threads share the group constants through the block they write.
  pack_kernel<<<1, kThreads, 0, stream>>>(f, fit, values, packed, fault);
  COCKTAIL_GPU_CHECK_LAUNCH("pack_kernel");
}

void launch_unpack(cudaStream_t stream, const BlockFormat& f, const std::byte* packed,
                   float* values) {
  const std::size_t n = std::size_t(f.tokens) * std::size_t(f.head_dim);
  if (n == 0) return;
  const auto blocks = unsigned((n + kThreads - 1) / kThreads);
  unpack_kernel<<<blocks, kThreads, 0, stream>>>(f, packed, values);
  COCKTAIL_GPU_CHECK_LAUNCH("unpack_kernel");
}

}  // namespace cocktail::gpu
