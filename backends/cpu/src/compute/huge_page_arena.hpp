#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace cocktail::cpu {

// Memory for the row-group copies of a model's matrices (CpuCompute::upload), carved in order
// out of 2 MiB-aligned blocks that ask the kernel for huge pages. In 4 KiB pages the decode GEMV
// waits on TLB misses, on large matrices (SmolLM2's output matrix) and on a model's many small
// ones alike, each too small for a huge page of its own (measurements in docs/journal.md).
// The kernel may refuse the hint (transparent huge pages off), which costs only that speed.
// Space is never reused: it is for copies made once, when a model is loaded.
class HugePageArena {
 public:
  // `bytes` bytes, 64-byte aligned. The block they sit in is freed when the last pointer into it
  // goes, so an allocation may outlive the arena. Thread-safe. Throws Error when out of memory.
  std::shared_ptr<std::uint8_t> allocate(std::size_t bytes);

 private:
  std::mutex mutex_;
  std::shared_ptr<std::uint8_t> block_;  // the block being filled
  std::size_t block_bytes_ = 0;
  std::size_t used_ = 0;
};

}  // namespace cocktail::cpu
