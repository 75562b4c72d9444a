#include "kv/commit_kernels.cuh"
#include "kv/commit_tile.cuh"
#include "runtime/gpu_check.hpp"

namespace cocktail::gpu {
namespace {

constexpr int kThreads = 128;

// Block (destination tile, head).
__global__ void commit_kernel(CommitArgs a) {
  commit_tile(a, blockIdx.x, int(blockIdx.y));
}

}  // namespace

void launch_commit(cudaStream_t stream, const CommitArgs& args, int n_table, int n_heads) {
  if (n_table == 0 || n_heads == 0) return;
  commit_kernel<<<dim3(unsigned(n_table), unsigned(n_heads)), kThreads, 0, stream>>>(args);
  COCKTAIL_GPU_CHECK_LAUNCH("commit_kernel");
}

}  // namespace cocktail::gpu
