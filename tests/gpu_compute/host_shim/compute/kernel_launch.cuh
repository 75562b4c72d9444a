#pragma once

// Stands in for backends/cuda/src/compute/kernel_launch.cuh in the host tests: a launch runs
// the grid's blocks one after another, each block's threads as host threads (vendor/
// gpu_runtime.hpp here has the rest).

#include <cstddef>
#include <thread>
#include <vector>

#include "vendor/gpu_runtime.hpp"

namespace gpu_emulation {

// Runs body() as every thread of every block. The threads are made once per launch and meet
// at `start` before each block, whose completion step makes the block's barriers afresh (a
// thread that returned early drops out of this block's barriers only).
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

namespace cocktail::gpu {

template <class... Params, class... Args>
void launch_kernel(const char* /*name*/, void (*kernel)(Params...), dim3 grid, dim3 block,
                   std::size_t shared_bytes, cudaStream_t /*stream*/, const Args&... args) {
  gpu_emulation::run(grid, block, shared_bytes, [&] { kernel(Params(args)...); });
}

inline float* dynamic_shared_floats() {
  return gpu_emulation::block().dynamic_shared.data();
}

}  // namespace cocktail::gpu
