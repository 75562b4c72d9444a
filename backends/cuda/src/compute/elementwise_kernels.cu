#include "compute/elementwise_kernels.cuh"
#include "compute/kernel_launch.cuh"
#include "compute/weight_loads.cuh"

namespace cocktail::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kEmbeddingThreads = 128;

unsigned blocks_for(long long items) {
  return unsigned((items + kThreads - 1) / kThreads);
}

__device__ inline long long global_index() {
  return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}

template <WeightFormat F>
__global__ void __launch_bounds__(kEmbeddingThreads)
    embedding_kernel(WeightRows table, const int* __restrict__ ids, float* __restrict__ out) {
  constexpr int kElements = unit_elements(F);
  const int id = ids[blockIdx.x];
  const bool inside = id >= 0 && id < table.rows;
  float* dst = out + (long long)blockIdx.x * table.cols;
  for (long long unit = threadIdx.x; unit * kElements < table.cols; unit += kEmbeddingThreads) {
    const UnitWords raw = inside ? load_unit(table, id, unit) : UnitWords{{0, 0, 0, 0}};
    const CodeGroup group = inside ? load_group<F>(table, id, unit) : CodeGroup{0.0f, 0.0f};
#pragma unroll
    for (int e = 0; e < kElements; ++e) {
      const long long j = unit * kElements + e;
      if (j < table.cols)
        dst[j] = inside ? decode_element<F>(raw, group, e) : __int_as_float(0x7fc00000);
    }
  }
}

// One thread per pair: (2i, 2i+1) of a head, or (i, i + head_dim/2) with `halves` (NeoX).
__global__ void rope_kernel(float* __restrict__ x, const int* __restrict__ positions, long long n,
                            int n_heads, int head_dim, float base, bool halves) {
  const long long pair = global_index();
  const int half = head_dim / 2;
  if (pair >= n * n_heads * half) return;
  const int i = int(pair % half);
  const long long head_row = pair / half;  // t · n_heads + head
  const long long t = head_row / n_heads;
  const float theta = float(positions[t]) * powf(base, -2.0f * float(i) / float(head_dim));
  float sine, cosine;
  sincosf(theta, &sine, &cosine);
  float* first = x + head_row * head_dim + (halves ? i : 2 * i);
  float* second = first + (halves ? half : 1);
  const float x0 = *first, x1 = *second;
  *first = x0 * cosine - x1 * sine;
  *second = x0 * sine + x1 * cosine;
}

__global__ void silu_mul_kernel(float* __restrict__ gate, const float* __restrict__ up,
                                long long count) {
  const long long i = global_index();
  if (i >= count) return;
  const float g = gate[i];
  gate[i] = g / (1.0f + expf(-g)) * up[i];
}

__global__ void add_kernel(float* __restrict__ x, const float* __restrict__ y, long long count) {
  const long long i = global_index();
  if (i < count) x[i] += y[i];
}

__global__ void gelu_kernel(float* __restrict__ x, long long count) {
  const long long i = global_index();
  if (i >= count) return;
  const float v = x[i];
  // Φ(v) = erfc(−v/√2)/2: erfc keeps the relative precision of the far negative tail, where
  // 1 + erf would cancel to zero.
  x[i] = 0.5f * v * erfcf(-v * 0.70710678118654752f);
}

__global__ void add_bias_kernel(float* __restrict__ x, const float* __restrict__ bias,
                                long long count, long long cols) {
  const long long i = global_index();
  if (i < count) x[i] += bias[i % cols];
}

}  // namespace

void launch_embedding(cudaStream_t stream, const WeightRows& table, const int* ids, std::int64_t n,
                      float* out) {
  if (n == 0) return;
  with_format(table.format, [&](auto format) {
    launch_kernel("embedding_kernel", embedding_kernel<decltype(format)::value>, unsigned(n),
                  kEmbeddingThreads, 0, stream, table, ids, out);
  });
}

void launch_rope(cudaStream_t stream, float* x, const int* positions, std::int64_t n, int n_heads,
                 int head_dim, float base, RopeStyle style) {
  const long long pairs = n * n_heads * (head_dim / 2);
  if (pairs == 0) return;
  launch_kernel("rope_kernel", rope_kernel, blocks_for(pairs), kThreads, 0, stream, x, positions,
                (long long)n, n_heads, head_dim, base, style == RopeStyle::halves);
}

void launch_silu_mul(cudaStream_t stream, float* gate, const float* up, std::int64_t count) {
  if (count == 0) return;
  launch_kernel("silu_mul_kernel", silu_mul_kernel, blocks_for(count), kThreads, 0, stream, gate,
                up, (long long)count);
}

void launch_add(cudaStream_t stream, float* x, const float* y, std::int64_t count) {
  if (count == 0) return;
  launch_kernel("add_kernel", add_kernel, blocks_for(count), kThreads, 0, stream, x, y,
                (long long)count);
}

void launch_gelu(cudaStream_t stream, float* x, std::int64_t count) {
  if (count == 0) return;
  launch_kernel("gelu_kernel", gelu_kernel, blocks_for(count), kThreads, 0, stream, x,
                (long long)count);
}

void launch_add_bias(cudaStream_t stream, float* x, const float* bias, std::int64_t rows,
                     std::int64_t cols) {
  const long long count = rows * cols;
  if (count == 0) return;
  launch_kernel("add_bias_kernel", add_bias_kernel, blocks_for(count), kThreads, 0, stream, x, bias,
                count, (long long)cols);
}

}  // namespace cocktail::gpu
