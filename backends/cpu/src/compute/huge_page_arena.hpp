#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace cocktail::cpu {

// Memory for the row-group copies of a model's matrices (CpuCompute::prepare), carved in order
// out of 2 MiB-aligned blocks that ask the kernel for huge pages. A layer's matrices take
// 0.07-0.6 MB each, too little for a huge page of their own, and in 4 KiB pages the decode GEMV
// over them waits on TLB misses: SmolLM2's 30 layers took 1.45 ms against 1.39 ms with every
// matrix in huge pages, and 1.24 against 1.21 ms with this arena in a later hour (docs/results.md).
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
