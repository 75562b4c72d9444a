#pragma once

// Stands in for backends/cuda/src/vendor/gpu_runtime.hpp when a test compiles the GPU backend's
// device code with the host compiler (tests/gpu, tests/gpu_compute); compute/kernel_launch.cuh's
// stand-in launches kernels through gpu_emulation::run, which code without a launch function of
// its own calls directly. A block's threads are host threads: __syncthreads is a barrier of the
// block, a warp shuffle an exchange through a barrier of its 32 threads, atomics are atomic, and
// __shared__ arrays are statics, which the blocks of a launch, run one after another, reuse.
// FP16 is IEEE binary16 rounded to nearest even and the _rn arithmetic correctly rounded, as on
// the device; the other math functions are the C library's.

#include <atomic>
#include <barrier>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "cocktail/float16.hpp"

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
using std::isfinite;

struct __half_raw {
  unsigned short x;
};

struct __half {
  cocktail::Float16 value;

  __half() = default;
  __half(__half_raw raw) : value(std::bit_cast<cocktail::Float16>(raw.x)) {}
  operator __half_raw() const { return {std::bit_cast<unsigned short>(value)}; }
};

inline float __half2float(__half h) {
  return static_cast<float>(h.value);
}
inline __half __float2half_rn(float x) {
  __half h;
  h.value = static_cast<cocktail::Float16>(x);
  return h;
}

inline float __fadd_rn(float a, float b) {
  return a + b;
}
inline float __fsub_rn(float a, float b) {
  return a - b;
}
inline float __fmul_rn(float a, float b) {
  return a * b;
}
inline float __fdiv_rn(float a, float b) {
  return a / b;
}
inline double __dadd_rn(double a, double b) {
  return a + b;
}
inline double __dsub_rn(double a, double b) {
  return a - b;
}
inline double __dmul_rn(double a, double b) {
  return a * b;
}
inline double __ddiv_rn(double a, double b) {
  return a / b;
}

inline unsigned long long atomicMin(unsigned long long* address, unsigned long long value) {
  std::atomic_ref<unsigned long long> slot(*address);
  unsigned long long old = slot.load();
  while (value < old && !slot.compare_exchange_weak(old, value)) {
  }
  return old;
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

// Runs body() as every thread of every block, with `shared_bytes` of dynamic shared memory. The
// threads are made once per launch and meet at `start` before each block, whose completion step
// makes the block's barriers afresh (a thread that returned early drops out of this block's
// barriers only).
template <class Body>
void run(dim3 grid, dim3 size, std::size_t shared_bytes, const Body& body) {
  const unsigned threads = size.x * size.y * size.z;
  const unsigned blocks = grid.x * grid.y * grid.z;
  if (threads == 0 || threads % kWarp != 0) throw std::logic_error("blocks of whole warps only");
  Block b{grid, size, {}, {}, {}, {std::vector<float>(threads), std::vector<float>(threads)}, {}};
  b.dynamic_shared.resize((shared_bytes + sizeof(float) - 1) / sizeof(float));
  current = &b;
  unsigned next = 0;
  auto next_block = [&]() noexcept {
    if (next == blocks) return;
    b.index = dim3(next % grid.x, next / grid.x % grid.y, next / (grid.x * grid.y));
    b.barrier.emplace(threads);
    b.warps.clear();
    for (unsigned w = 0; w < threads / kWarp; ++w) {
      b.warps.push_back(std::make_unique<std::barrier<>>(kWarp));
    }
    ++next;
  };
  std::barrier start(threads, next_block);
  std::vector<std::thread> team;
  for (unsigned t = 0; t < threads; ++t) {
    team.emplace_back([&, t] {
      linear_thread = t;
      shuffles = 0;
      thread_index = dim3(t % size.x, t / size.x % size.y, t / (size.x * size.y));
      for (unsigned i = 0; i < blocks; ++i) {
        start.arrive_and_wait();
        body();
        b.barrier->arrive_and_drop();
        b.warps[t / kWarp]->arrive_and_drop();
      }
    });
  }
  for (std::thread& member : team) member.join();
  current = nullptr;
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
