#pragma once

// Stands in for backends/cuda/src/vendor/gpu_runtime.hpp when the tests compile the compute
// kernels with the host compiler; compute/kernel_launch.cuh's stand-in runs them. A block's
// threads are host threads: __syncthreads is a barrier of the block, a warp shuffle an exchange
// through a barrier of its 32 threads, and __shared__ arrays are statics, which the blocks
// of a launch, run one after another, reuse. The math functions are the C library's.

#include <barrier>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#define __host__
#define __device__
#define __global__
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

namespace cocktail::gpu {
inline constexpr const char* kBackendName = "emulated";
inline constexpr const char* kRuntimeName = "emulated";
inline constexpr int kLanes = 32;
}  // namespace cocktail::gpu

using cudaStream_t = struct EmulatedStream*;

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint4 {
  unsigned x, y, z, w;
};
struct float4 {
  float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) {
  return {x, y, z, w};
}
inline float __int_as_float(int v) {
  return std::bit_cast<float>(v);
}
inline float __uint_as_float(unsigned v) {
  return std::bit_cast<float>(v);
}
inline int min(int a, int b) {
  return a < b ? a : b;
}

namespace gpu_emulation {

constexpr int kWarp = 32;

// The block being run: its place in the grid, and what its threads share.
struct Block {
  dim3 grid, size, index;
  std::optional<std::barrier<>> barrier;
  std::vector<std::unique_ptr<std::barrier<>>> warps;
  // Two slots a thread for shuffles, used in turn: a lane writes the other slot for its next
  // shuffle while a slower one still reads this one, and cannot come back to this one before
  // every lane has passed the next shuffle's barrier, so one barrier a shuffle suffices.
  std::vector<float> exchange[2];
  std::vector<float> dynamic_shared;
};

inline Block* current = nullptr;
inline thread_local unsigned linear_thread = 0;
inline thread_local unsigned shuffles = 0;
inline thread_local dim3 thread_index;

inline Block& block() {
  return *current;
}

}  // namespace gpu_emulation

#define threadIdx (::gpu_emulation::thread_index)
#define blockIdx (::gpu_emulation::block().index)
#define blockDim (::gpu_emulation::block().size)
#define gridDim (::gpu_emulation::block().grid)

inline void __syncthreads() {
  gpu_emulation::block().barrier->arrive_and_wait();
}

template <class T>
T __shfl_xor_sync(unsigned /*mask*/, T v, int lane_mask, int width) {
  static_assert(std::is_same_v<T, float>, "the emulated shuffle exchanges floats");
  if (lane_mask >= width || width > gpu_emulation::kWarp) {
    throw std::logic_error("__shfl_xor_sync: a lane mask outside the width");
  }
  gpu_emulation::Block& b = gpu_emulation::block();
  const unsigned t = gpu_emulation::linear_thread;
  std::barrier<>& warp = *b.warps[t / gpu_emulation::kWarp];
  std::vector<float>& slots = b.exchange[gpu_emulation::shuffles++ % 2];
  slots[t] = v;
  warp.arrive_and_wait();
  return slots[t ^ unsigned(lane_mask)];
}
