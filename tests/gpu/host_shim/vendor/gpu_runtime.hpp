#pragma once

// Stands in for backends/cuda/src/vendor/gpu_runtime.hpp when a test compiles the GPU backend's
// device code with the host compiler: the few CUDA names that code uses, with the semantics the
// device gives them (IEEE binary16 rounded to nearest even, correctly rounded _rn arithmetic).
// The test runs a kernel's body as the one thread of a one-thread block, so every barrier is
// already passed and every atomic is a plain read-modify-write.

#include <bit>
#include <cmath>
#include <cstdint>

#define __host__
#define __device__
#define __global__

struct __half_raw {
  unsigned short x;
};

struct __half {
  _Float16 value;

  __half() = default;
  __half(__half_raw raw) : value(std::bit_cast<_Float16>(raw.x)) {}
  operator __half_raw() const { return {std::bit_cast<unsigned short>(value)}; }
};

inline float __half2float(__half h) {
  return static_cast<float>(h.value);
}
inline __half __float2half_rn(float x) {
  __half h;
  h.value = static_cast<_Float16>(x);
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
using std::isfinite;

struct uint4 {
  unsigned x, y, z, w;
};

struct HostDim3 {
  unsigned x = 0, y = 0, z = 0;
};
inline const HostDim3 threadIdx{0, 0, 0};
inline const HostDim3 blockDim{1, 1, 1};
inline void __syncthreads() {}

inline unsigned long long atomicMin(unsigned long long* address, unsigned long long value) {
  const unsigned long long old = *address;
  if (value < old) *address = value;
  return old;
}

using cudaStream_t = struct CUstream_st*;
