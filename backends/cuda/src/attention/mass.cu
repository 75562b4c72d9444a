// The attention mass of the last n_query tokens: for each query head, their causal softmax
// weights over the layer's tokens, summed. It runs before any commit, so every token is an FP16
// row of the tail. A block per (query head, 8 queries) makes two passes over the keys the
// queries see, a thread per key: the first finds each query's softmax maximum and sum, the
// second adds the key's weights under them into the mass, which the launch zeroes first.

#include <cstdint>

#include "attention/attention_kernels.hpp"
#include "attention/warp_math.cuh"
#include "runtime/gpu_check.hpp"

namespace cocktail::gpu {

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * kLanes;
constexpr int kQueries = 8;  // queries of a block

// Two softmax states (maximum m, sum l of 2^(x - m)) as one.
__device__ void merge_state(float& m, float& l, float other_m, float other_l) {
  const float top = fmaxf(m, other_m);
  const float base = softmax_base(top);
  l = l * exp2f(m - base) + other_l * exp2f(other_m - base);
  m = top;
}

// The scores of one key row with the block's queries (shared, [kQueries][dim]).
__device__ void key_scores(const __half* key, const float* queries, int dim, float (&s)[kQueries]) {
#pragma unroll
  for (int k = 0; k < kQueries; ++k) s[k] = 0.0f;
  for (int c = 0; c < dim; c += 8) {
    const uint4 u = *reinterpret_cast<const uint4*>(key + c);
    const float2 a = halves_of(u.x), b = halves_of(u.y), e = halves_of(u.z), f = halves_of(u.w);
#pragma unroll
    for (int k = 0; k < kQueries; ++k) {
      const float4 q0 = *reinterpret_cast<const float4*>(queries + k * dim + c);
      const float4 q1 = *reinterpret_cast<const float4*>(queries + k * dim + c + 4);
      float x = s[k];
      x = fmaf(q0.x, a.x, fmaf(q0.y, a.y, fmaf(q0.z, b.x, fmaf(q0.w, b.y, x))));
      x = fmaf(q1.x, e.x, fmaf(q1.y, e.y, fmaf(q1.z, f.x, fmaf(q1.w, f.y, x))));
      s[k] = x;
    }
  }
}

__global__ void __launch_bounds__(kThreads) mass_kernel(__grid_constant__ const MassParams p) {
  extern __shared__ float4 shared_storage[];
  float* queries = reinterpret_cast<float*>(shared_storage);  // [kQueries][dim]
  __shared__ float partial_m[kWarps][kQueries];
  __shared__ float partial_l[kWarps][kQueries];
  __shared__ float final_m[kQueries];
  __shared__ float final_inverse_l[kQueries];

  const int dim = p.head_dim;
  const int q_head = int(blockIdx.x);
  const std::int64_t first_query = std::int64_t(blockIdx.y) * kQueries;
  const std::size_t q_stride = std::size_t(p.n_q_heads) * std::size_t(dim);
  for (int i = int(threadIdx.x); i < kQueries * dim; i += kThreads) {
    const std::int64_t query = first_query + i / dim;
    queries[i] = query < p.n_query
                     ? p.q[std::size_t(query) * q_stride + std::size_t(q_head) * std::size_t(dim) +
                           std::size_t(i % dim)] *
                           p.scale
                     : 0.0f;
  }
  __syncthreads();

  // Query k (of n_query, at position n_tokens - n_query + k) sees keys [0, limit[k]).
  std::int64_t limit[kQueries];
#pragma unroll
  for (int k = 0; k < kQueries; ++k) {
    const std::int64_t query = first_query + k;
    limit[k] = query < p.n_query ? p.n_tokens - p.n_query + query + 1 : 0;
  }
  const std::int64_t last =
      first_query + kQueries - 1 < p.n_query - 1 ? first_query + kQueries - 1 : p.n_query - 1;
  const std::int64_t seen = p.n_tokens - p.n_query + last + 1;
  const std::size_t head =
      std::size_t(p.layer) * std::size_t(p.n_kv_heads) + std::size_t(q_head / p.group);
  const __half* keys = p.tail.keys + head * std::size_t(p.tail.capacity) * std::size_t(dim);

  float m[kQueries], l[kQueries];
#pragma unroll
  for (int k = 0; k < kQueries; ++k) {
    m[k] = kMinusInfinity;
    l[k] = 0.0f;
  }
  for (std::int64_t t = threadIdx.x; t < seen; t += kThreads) {
    float s[kQueries];
    key_scores(keys + std::size_t(t) * std::size_t(dim), queries, dim, s);
#pragma unroll
    for (int k = 0; k < kQueries; ++k) {
      if (t < limit[k]) merge_state(m[k], l[k], s[k], 1.0f);
    }
  }
  const int warp = int(threadIdx.x) / kLanes;
  const int lane = int(threadIdx.x) % kLanes;
#pragma unroll
  for (int k = 0; k < kQueries; ++k) {
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {
      const float other_m = __shfl_xor_sync(kFullMask, m[k], offset, kLanes);
      const float other_l = __shfl_xor_sync(kFullMask, l[k], offset, kLanes);
      merge_state(m[k], l[k], other_m, other_l);
    }
    if (lane == 0) {
      partial_m[warp][k] = m[k];
      partial_l[warp][k] = l[k];
    }
  }
  __syncthreads();
  if (threadIdx.x < kQueries) {
    const int k = int(threadIdx.x);
    float top = partial_m[0][k], sum = partial_l[0][k];
    for (int w = 1; w < kWarps; ++w) merge_state(top, sum, partial_m[w][k], partial_l[w][k]);
    final_m[k] = softmax_base(top);
    final_inverse_l[k] = sum > 0.0f ? 1.0f / sum : 0.0f;
  }
  __syncthreads();

  float* mass = p.mass + std::size_t(q_head) * std::size_t(p.n_tokens);
  for (std::int64_t t = threadIdx.x; t < seen; t += kThreads) {
    float s[kQueries];
    key_scores(keys + std::size_t(t) * std::size_t(dim), queries, dim, s);
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < kQueries; ++k) {
      if (t < limit[k]) sum += exp2f(s[k] - final_m[k]) * final_inverse_l[k];
    }
    atomicAdd(mass + t, sum);
  }
}

}  // namespace

void launch_attention_mass(const MassParams& params, cudaStream_t stream) {
  COCKTAIL_GPU_CHECK(cudaMemsetAsync(
      params.mass, 0, std::size_t(params.n_q_heads) * std::size_t(params.n_tokens) * sizeof(float),
      stream));
  const dim3 grid(unsigned(params.n_q_heads), unsigned((params.n_query + kQueries - 1) / kQueries));
  const std::size_t shared_bytes =
      std::size_t(kQueries) * std::size_t(params.head_dim) * sizeof(float);
  mass_kernel<<<grid, kThreads, shared_bytes, stream>>>(params);
  COCKTAIL_GPU_CHECK_LAUNCH("mass_kernel");
}

}  // namespace cocktail::gpu
