#include "compute/kernel_launch.cuh"
#include "compute/norm_kernels.cuh"
#include "compute/reduce.cuh"

namespace cocktail::gpu {
namespace {

constexpr int kNormThreads = 256;

// x and out may be the same memory: each element is read, after the sums, by the thread that
// writes it.
__global__ void __launch_bounds__(kNormThreads)
    rms_norm_kernel(const float* x, const float* __restrict__ weight, long long cols, float eps,
                    float* out) {
  __shared__ float scratch[kNormThreads / kLanes];
  const float* row = x + (long long)blockIdx.x * cols;
  float* dst = out + (long long)blockIdx.x * cols;
  float squares = 0.0f;
  for (long long j = threadIdx.x; j < cols; j += kNormThreads)
    squares = fmaf(row[j], row[j], squares);
  const float inverse = 1.0f / sqrtf(block_sum(squares, scratch) / float(cols) + eps);
  for (long long j = threadIdx.x; j < cols; j += kNormThreads)
    dst[j] = row[j] * inverse * weight[j];
}

__global__ void __launch_bounds__(kNormThreads)
    layer_norm_kernel(const float* x, const float* __restrict__ weight,
                      const float* __restrict__ bias, long long cols, float eps, float* out) {
  __shared__ float scratch[kNormThreads / kLanes];
  const float* row = x + (long long)blockIdx.x * cols;
  float* dst = out + (long long)blockIdx.x * cols;
  float sum = 0.0f;
  for (long long j = threadIdx.x; j < cols; j += kNormThreads) sum += row[j];
  const float mean = block_sum(sum, scratch) / float(cols);
  float squares = 0.0f;
  for (long long j = threadIdx.x; j < cols; j += kNormThreads) {
    const float d = row[j] - mean;
    squares = fmaf(d, d, squares);
  }
  const float inverse = 1.0f / sqrtf(block_sum(squares, scratch) / float(cols) + eps);
  for (long long j = threadIdx.x; j < cols; j += kNormThreads) {
    dst[j] = (row[j] - mean) * inverse * weight[j] + bias[j];
  }
}

}  // namespace

void launch_rms_norm(cudaStream_t stream, const float* x, const float* weight, std::int64_t rows,
                     std::int64_t cols, float eps, float* out) {
  if (rows == 0) return;
  launch_kernel("rms_norm_kernel", rms_norm_kernel, unsigned(rows), kNormThreads, 0, stream, x,
                weight, (long long)cols, eps, out);
}

void launch_layer_norm(cudaStream_t stream, const float* x, const float* weight, const float* bias,
                       std::int64_t rows, std::int64_t cols, float eps, float* out) {
  if (rows == 0) return;
  launch_kernel("layer_norm_kernel", layer_norm_kernel, unsigned(rows), kNormThreads, 0, stream, x,
                weight, bias, (long long)cols, eps, out);
}

}  // namespace cocktail::gpu
