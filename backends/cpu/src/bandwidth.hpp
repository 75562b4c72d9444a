#pragma once

#include <cstddef>

namespace cocktail::cpu {

// Bytes per second that `threads` threads (0 = all) read from a `bytes`-sized buffer with the
// widest SIMD loads this CPU has: the roofline the attention kernels are measured against.
double measure_read_bandwidth(std::size_t bytes, int threads);

}  // namespace cocktail::cpu
