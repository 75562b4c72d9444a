#pragma once

#include <cstddef>

namespace cocktail::cpu {

inline constexpr std::size_t kHugePage = std::size_t(2) << 20;

// Asks the kernel to back the whole 2 MiB pages inside [p, p + bytes) with huge pages
// (madvise MADV_HUGEPAGE), before they are first written. Data read in full every decode step
// (a KV cache, a model's matrices) otherwise costs a TLB miss every 4 KiB where transparent huge
// pages are enabled only on request ("madvise", the setting of many distributions). A refused
// hint (huge pages off) costs only that speed, so errors are ignored.
void advise_huge_pages(void* p, std::size_t bytes);

}  // namespace cocktail::cpu
