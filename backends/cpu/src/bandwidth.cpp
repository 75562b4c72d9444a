#include "bandwidth.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "cocktail/error.hpp"
#include "cocktail/stopwatch.hpp"

// Highway compiles this file once per SIMD target: the order of these lines matters.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bandwidth.cpp"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
#include <hwy/aligned_allocator.h>
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace cocktail::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Reads [begin, end) with four independent accumulators so loads, not adds, set the pace.
std::uint64_t ReadRange(const std::uint64_t* begin, std::size_t count) {
  const hn::ScalableTag<std::uint64_t> d;
  const std::size_t n = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  std::size_t i = 0;
  for (; i + 4 * n <= count; i += 4 * n) {
    a0 = hn::Xor(a0, hn::Load(d, begin + i));
    a1 = hn::Xor(a1, hn::Load(d, begin + i + n));
    a2 = hn::Xor(a2, hn::Load(d, begin + i + 2 * n));
    a3 = hn::Xor(a3, hn::Load(d, begin + i + 3 * n));
  }
  const auto all = hn::Xor(hn::Xor(a0, a1), hn::Xor(a2, a3));
  std::uint64_t x = hn::GetLane(hn::SumOfLanes(d, all));
  for (; i < count; ++i) x ^= begin[i];
  return x;
}

}  // namespace HWY_NAMESPACE
}  // namespace cocktail::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cocktail::cpu {

HWY_EXPORT(ReadRange);

// Where the probe's checksum goes, so the compiler cannot drop the reads.
volatile std::uint64_t g_probe_sink = 0;

double measure_read_bandwidth(std::size_t bytes, int threads) {
  const int n_threads = threads > 0 ? threads : omp_get_max_threads();
  // Each thread's share starts on a 4 KiB boundary so aligned loads are always legal.
  constexpr std::size_t kWordsPerPage = 512;
  const std::size_t words =
      std::max<std::size_t>(bytes / 8 / kWordsPerPage, std::size_t(n_threads)) * kWordsPerPage;
  auto buffer = hwy::AllocateAligned<std::uint64_t>(words);
  if (!buffer)
    throw Error("bandwidth probe: cannot allocate " + std::to_string(words * 8) + " bytes");
  std::memset(buffer.get(), 1, words * 8);
  const std::size_t pages = words / kWordsPerPage;

  double best = 0.0;
  double spent = 0.0;
  std::uint64_t sink = 0;
  // Best of several passes, at least 5 and at least 0.3 s: the first pass warms caches and TLB.
  for (int pass = 0; pass < 5 || spent < 0.3; ++pass) {
    const Stopwatch watch;
#pragma omp parallel num_threads(n_threads) reduction(^ : sink)
    {
      const std::size_t t = std::size_t(omp_get_thread_num());
      const std::size_t first = pages * t / std::size_t(n_threads) * kWordsPerPage;
      const std::size_t last = pages * (t + 1) / std::size_t(n_threads) * kWordsPerPage;
      sink ^= HWY_DYNAMIC_DISPATCH(ReadRange)(buffer.get() + first, last - first);
    }
    const double seconds = watch.seconds();
    spent += seconds;
    best = std::max(best, double(words * 8) / seconds);
    if (pass > 200) break;
  }
  g_probe_sink = sink;
  return best;
}

}  // namespace cocktail::cpu
#endif
