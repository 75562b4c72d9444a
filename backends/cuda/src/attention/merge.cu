// The log-sum-exp merge of a decode step's partial states (docs/architecture.md, "Log-sum-exp
// merge"): per query head, m = max_r m_r over the ranges that saw a token (l_r > 0),
// w_r = 2^(m_r - m), l = Σ_r l_r·w_r and out = Σ_r o_r·w_r / l. The partial outputs are
// unnormalised, so they need no l_r factor. One block per query head: the threads share the
// ranges' weights through shared memory, then each sums its channels over the ranges.

#include <cstdint>

#include "attention/attention_kernels.hpp"
#include "attention/warp_math.cuh"
#include "runtime/gpu_check.hpp"

namespace cocktail::gpu {

namespace {

constexpr int kMergeThreads = 128;
constexpr int kMergeGroups = kMergeThreads / kLanes;

// The maximum (or sum) of every thread's x, in every thread.
template <bool kMax>
__device__ float block_reduce(float x, float* scratch) {
  x = kMax ? lanes_max(x) : lanes_sum(x);
  if (threadIdx.x % kLanes == 0) scratch[threadIdx.x / kLanes] = x;
  __syncthreads();
  float r = scratch[0];
  for (int g = 1; g < kMergeGroups; ++g) r = kMax ? fmaxf(r, scratch[g]) : r + scratch[g];
  __syncthreads();
  return r;
}

__global__ void __launch_bounds__(kMergeThreads)
    merge_kernel(const float* m, const float* l, const float* o, int splits, int head_dim,
                 float* out) {
  extern __shared__ float4 shared_storage[];
  float* weights = reinterpret_cast<float*>(shared_storage);  // [splits]
  __shared__ float scratch[kMergeGroups];
  const std::size_t first = std::size_t(blockIdx.x) * std::size_t(splits);
  float top = kMinusInfinity;
  for (int r = int(threadIdx.x); r < splits; r += kMergeThreads) {
    if (l[first + r] > 0.0f) top = fmaxf(top, m[first + r]);
  }
  const float base = softmax_base(block_reduce<true>(top, scratch));
  float total = 0.0f;
  for (int r = int(threadIdx.x); r < splits; r += kMergeThreads) {
    const float w = l[first + r] > 0.0f ? exp2f(m[first + r] - base) : 0.0f;
    weights[r] = w;
    total = fmaf(l[first + r], w, total);
  }
  // The reduction's barriers also make every weight visible.
  total = block_reduce<false>(total, scratch);
  const float inverse = total > 0.0f ? 1.0f / total : 0.0f;
  for (int c = int(threadIdx.x); c < head_dim; c += kMergeThreads) {
    float sum = 0.0f;
    for (int r = 0; r < splits; ++r) {
      // A range with no token has weight 0 and an output of zeros.
      sum = fmaf(o[(first + std::size_t(r)) * std::size_t(head_dim) + std::size_t(c)], weights[r],
                 sum);
    }
    out[std::size_t(blockIdx.x) * std::size_t(head_dim) + std::size_t(c)] = sum * inverse;
  }
}

}  // namespace

void launch_merge(const DecodePartials& partials, int n_q_heads, int splits, int head_dim,
                  float* out, cudaStream_t stream) {
  merge_kernel<<<unsigned(n_q_heads), kMergeThreads, std::size_t(splits) * sizeof(float), stream>>>(
      partials.m, partials.l, partials.o, splits, head_dim, out);
  COCKTAIL_GPU_CHECK_LAUNCH("merge_kernel");
}

}  // namespace cocktail::gpu
