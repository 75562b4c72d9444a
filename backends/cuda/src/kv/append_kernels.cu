#include <algorithm>

#include "kv/append_kernels.cuh"
#include "runtime/gpu_check.hpp"

namespace cocktail::gpu {
namespace {

constexpr int kThreads = 256;
// Enough blocks to fill any current GPU; larger appends loop.
constexpr std::int64_t kMaxBlocks = 4096;

__global__ void append_kernel(AppendTarget to, const float* k, const float* v,
                              std::int64_t n_values) {
  const std::int64_t width = std::int64_t(to.n_kv_heads) * to.head_dim;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n_values;
       i += stride) {
    const std::int64_t token = i / width;
    const std::int64_t head = (i % width) / to.head_dim;
    const std::int64_t channel = i % to.head_dim;
    const std::int64_t row =
        (std::int64_t(to.layer) * to.n_kv_heads + head) * to.capacity + to.first_row + token;
    const std::int64_t at = row * to.head_dim + channel;
    to.keys[at] = __float2half_rn(k[i]);
    to.values[at] = __float2half_rn(v[i]);
  }
}

}  // namespace

void launch_append(cudaStream_t stream, const AppendTarget& to, const float* k, const float* v,
                   std::int64_t n_tokens) {
  const std::int64_t n_values = n_tokens * to.n_kv_heads * to.head_dim;
  if (n_values == 0) return;
  const auto blocks = unsigned(std::min(kMaxBlocks, (n_values + kThreads - 1) / kThreads));
  append_kernel<<<blocks, kThreads, 0, stream>>>(to, k, v, n_values);
  COCKTAIL_GPU_CHECK_LAUNCH("append_kernel");
}

}  // namespace cocktail::gpu
