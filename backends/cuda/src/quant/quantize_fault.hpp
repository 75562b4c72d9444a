#pragma once

// What a quantizing kernel found wrong, written on the device and read by the host after the
// kernel: where the first non-finite value was, and the first value (or group scale, zero or
// absmax) beyond the FP16 range. A site is the caller's encoding of a place; the lowest wins.

namespace cocktail::gpu {

inline constexpr unsigned long long kNoSite = ~0ull;

struct QuantizeFault {
  unsigned long long non_finite = kNoSite;
  unsigned long long beyond_half = kNoSite;
};

}  // namespace cocktail::gpu
