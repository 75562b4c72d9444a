#pragma once

// Reading rows of a tile's key or value codes (gpu_common/tile_format.hpp) the way the decode
// kernel walks them, straight from global memory into registers, where attention/code_map.hpp says:
//
// - a key row by one lane, in slices of 32 channels (one 16-byte planar unit of INT4/NF4, half
//   a unit of INT2), each slice's raw codes dotted with a query vector in shared memory;
// - a value row by many lanes, each taking a run of 4 channels (one 32-bit word of codes, or 8
//   bytes of FP16), which every precision's layout keeps together.
//
// Codes come out as their integer values (FP16: the values; NF4: the table level); scales and
// zeros are applied by the caller, folded out of these loops. Lanes that are not `live` load
// nothing and see zeros.

#include <cstdint>

#include "attention/code_map.hpp"
#include "attention/warp_math.cuh"
#include "cocktail/precision.hpp"
#include "gpu_common/tile_format.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

inline constexpr unsigned kLowNibbles = 0x0F0F0F0Fu;
inline constexpr unsigned kLowCrumbs = 0x03030303u;

// d[h] += Σ_i x_i · qv[h · stride + c + i] over i < 4; the four query values of a head come in
// one 16-byte shared-memory load, the same address in every lane.
template <int kHeads>
__device__ __forceinline__ void dot4(float (&d)[kHeads], const float* qv, int stride, int c,
                                     float x0, float x1, float x2, float x3) {
#pragma unroll
  for (int h = 0; h < kHeads; ++h) {
    const float4 w = *reinterpret_cast<const float4*>(qv + h * stride + c);
    d[h] = fmaf(w.x, x0, d[h]);
    d[h] = fmaf(w.y, x1, d[h]);
    d[h] = fmaf(w.z, x2, d[h]);
    d[h] = fmaf(w.w, x3, d[h]);
  }
}

// Four byte codes (each below 16 for NF4), channels c..c+3, dotted into d.
template <Precision P, int kHeads>
__device__ __forceinline__ void dot_codes(float (&d)[kHeads], const float* qv, int stride, int c,
                                          unsigned codes, const float* levels) {
  if constexpr (P == Precision::nf4) {
    dot4(d, qv, stride, c, levels[codes & 0xFFu], levels[(codes >> 8) & 0xFFu],
         levels[(codes >> 16) & 0xFFu], levels[codes >> 24]);
  } else {
    dot4(d, qv, stride, c, byte_value(codes, 0), byte_value(codes, 1), byte_value(codes, 2),
         byte_value(codes, 3));
  }
}

__device__ __forceinline__ unsigned word_of(const uint4& u, int k) {
  return k == 0 ? u.x : k == 1 ? u.y : k == 2 ? u.z : u.w;
}

// The mask of one code in a byte, for four bytes at once.
template <Precision P>
COCKTAIL_HOST_DEVICE constexpr unsigned code_mask() {
  return P == Precision::int2 ? kLowCrumbs : P == Precision::int8 ? 0xFFFFFFFFu : kLowNibbles;
}

// The bytes of one slice of a key row, loaded before they are used so that a lane keeps several
// slices' loads in flight: FP16 64 bytes, INT8 32, INT4/NF4 and INT2 16 (an INT2 half unit: 8,
// in x and y).
template <Precision P>
struct SliceBytes {
  static constexpr int kVectors = P == Precision::fp16 ? 4 : P == Precision::int8 ? 2 : 1;
  uint4 v[kVectors];
};

// Slices a lane loads before it uses the first: 64 bytes, 16 registers.
template <Precision P>
inline constexpr int kSlicesAhead = 4 / SliceBytes<P>::kVectors;

// Slice `slice` of a key row (zeros when !live).
template <Precision P>
__device__ __forceinline__ SliceBytes<P> load_slice(const unsigned char* row, int slice,
                                                    int head_dim, bool live) {
  SliceBytes<P> b;
  const SliceLoad load = slice_load(P, head_dim, slice);
#pragma unroll
  for (int k = 0; k < SliceBytes<P>::kVectors; ++k) b.v[k] = make_uint4(0u, 0u, 0u, 0u);
  if (!live) return b;
  const unsigned char* p = row + load.offset;
  if (load.bytes < kUnitBytes) {
    const uint2 u = *reinterpret_cast<const uint2*>(p);
    b.v[0] = make_uint4(u.x, u.y, 0u, 0u);
  } else if (P == Precision::int2 && head_dim % 64 != 0) {
    // INT2 rows are 16-byte aligned only when they are whole units.
    const uint2 u0 = reinterpret_cast<const uint2*>(p)[0];
    const uint2 u1 = reinterpret_cast<const uint2*>(p)[1];
    b.v[0] = make_uint4(u0.x, u0.y, u1.x, u1.y);
  } else {
#pragma unroll
    for (int k = 0; k < SliceBytes<P>::kVectors; ++k) {
      b.v[k] = reinterpret_cast<const uint4*>(p)[k];
    }
  }
  return b;
}

// Adds the dot products of a loaded slice (channels 32·slice ..+31) with the query vectors
// qv[h · stride + channel] to d[h].
template <Precision P, int kHeads>
__device__ __forceinline__ void dot_slice(float (&d)[kHeads], const SliceBytes<P>& b, int slice,
                                          int head_dim, const float* qv, int stride,
                                          const float* levels) {
  if constexpr (P == Precision::fp16) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int c = 32 * slice + 8 * k;
      const float2 x0 = halves_of(b.v[k].x), x1 = halves_of(b.v[k].y);
      const float2 x2 = halves_of(b.v[k].z), x3 = halves_of(b.v[k].w);
      dot4(d, qv, stride, c, x0.x, x0.y, x1.x, x1.y);
      dot4(d, qv, stride, c + 4, x2.x, x2.y, x3.x, x3.y);
    }
  } else {
    const PlaneSpan planes = slice_planes(P, head_dim, slice);
    const int words = slice_load(P, head_dim, slice).bytes / 4;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (k < planes.count) {
        const int plane = planes.first + k;
#pragma unroll
        for (int w = 0; w < 4 * SliceBytes<P>::kVectors; ++w) {
          if (w < words) {
            const unsigned codes =
                (word_of(b.v[w / 4], w % 4) >> (plane * precision_bits(P))) & code_mask<P>();
            dot_codes<P>(d, qv, stride, slice_channel(P, head_dim, slice, w, plane), codes, levels);
          }
        }
      }
    }
  }
}

// The bits of one run of 4 value channels: 8 bytes of FP16, else one 32-bit word.
template <Precision P>
struct RunBits {
  uint2 bits;
};

// Run `run` (channels 4·run ..) of a value row (zeros when !live).
template <Precision P>
__device__ __forceinline__ RunBits<P> load_run(const unsigned char* row, int run, int head_dim,
                                               bool live) {
  RunBits<P> r{make_uint2(0u, 0u)};
  if (!live) return r;
  const RunWord at = run_word(P, head_dim, run);
  if constexpr (P == Precision::fp16) {
    r.bits = *reinterpret_cast<const uint2*>(row + at.byte);
  } else {
    r.bits.x = *reinterpret_cast<const unsigned*>(row + at.byte);
  }
  return r;
}

// The run's four codes as floats (FP16: the values; NF4: the levels).
template <Precision P>
__device__ __forceinline__ void run_values(float (&y)[4], const RunBits<P>& r, int run,
                                           int head_dim, const float* levels) {
  if constexpr (P == Precision::fp16) {
    const float2 a = halves_of(r.bits.x), b = halves_of(r.bits.y);
    y[0] = a.x;
    y[1] = a.y;
    y[2] = b.x;
    y[3] = b.y;
  } else {
    const unsigned codes = (r.bits.x >> run_word(P, head_dim, run).shift) & code_mask<P>();
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (P == Precision::nf4) {
        y[i] = levels[(codes >> (8 * i)) & 0xFFu];
      } else {
        y[i] = byte_value(codes, i);
      }
    }
  }
}

}  // namespace cocktail::gpu
