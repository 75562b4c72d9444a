#include "compute/huge_page_arena.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "alignment.hpp"
#include "cocktail/error.hpp"
#include "memory/huge_pages.hpp"

namespace cocktail::cpu {

namespace {

// Big enough that a block holds many layers' matrices; what a block leaves unused is never
// touched, so it takes address space, not memory.
constexpr std::size_t kBlockBytes = std::size_t(32) << 20;

}  // namespace

std::shared_ptr<std::uint8_t> HugePageArena::allocate(std::size_t bytes) {
  const std::size_t rounded = round_up(bytes, kCacheLine);
  const std::lock_guard lock(mutex_);
  if (!block_ || block_bytes_ - used_ < rounded) {
    const std::size_t size = std::max(kBlockBytes, round_up(rounded, kHugePage));
    void* p = std::aligned_alloc(kHugePage, size);
    if (p == nullptr) {
      throw Error("row groups: cannot allocate a block of " + std::to_string(size) + " bytes for " +
                  std::to_string(bytes) + " bytes of weights");
    }
    advise_huge_pages(p, size);
    block_.reset(static_cast<std::uint8_t*>(p), [](std::uint8_t* q) { std::free(q); });
    block_bytes_ = size;
    used_ = 0;
  }
  std::shared_ptr<std::uint8_t> out(block_, block_.get() + used_);
  used_ += rounded;
  return out;
}

}  // namespace cocktail::cpu
