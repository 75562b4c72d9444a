// Causal prefill attention, tiled in the manner of flash attention with the online softmax in
// FP32: a block per (32 rows, KV head), where the rows are the new tokens × the query heads of
// the KV head's GQA group (row r: token r / group, head r % group), so the block dequantizes
// each key tile once for every head of the group. Keys come 32 at a time into shared memory as
// floats: first every committed segment tile (all of them before the queries, so unmasked), then
// the tail up to the last row's own position, masked where it crosses the diagonal. Each warp
// owns 8 of the rows (warp w: rows w, w + 4, ...): a lane scores one key for all 8, then owns
// channels lane + 32j of their outputs. A portable path on CUDA cores; the decode step, not the
// prefill, is what a token's time is spent on.

#include <cstdint>
#include <string>

#include "attention/attention_kernels.hpp"
#include "attention/warp_math.cuh"
#include "cocktail/error.hpp"
#include "kv/tile_codes.cuh"
#include "runtime/gpu_check.hpp"

namespace cocktail::gpu {

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * kLanes;
constexpr int kRows = 32;  // rows of a block
constexpr int kRowsPerWarp = kRows / kWarps;
constexpr int kKeys = kLanes;  // keys of a chunk
constexpr int kKeyPad = 4;     // keeps a lane's key row 16-byte aligned, off its
                               // neighbours' banks

// Shared memory in floats: the block's scaled queries [kRows][dim], the chunk's keys
// [kKeys][dim + kKeyPad] and values [kKeys][dim], and each warp's weights [kKeys][kRowsPerWarp].
struct PrefillShared {
  int dim;

  COCKTAIL_HOST_DEVICE constexpr int queries() const { return 0; }
  COCKTAIL_HOST_DEVICE constexpr int keys() const { return kRows * dim; }
  COCKTAIL_HOST_DEVICE constexpr int values() const { return keys() + kKeys * (dim + kKeyPad); }
  COCKTAIL_HOST_DEVICE constexpr int weights(int warp) const {
    return values() + kKeys * dim + warp * kKeys * kRowsPerWarp;
  }
  COCKTAIL_HOST_DEVICE constexpr std::size_t bytes() const {
    return std::size_t(weights(kWarps)) * sizeof(float);
  }
};

// One thread's view of its warp's rows.
struct RowState {
  float m[kRowsPerWarp];
  float l[kRowsPerWarp];
  std::int64_t limit[kRowsPerWarp];  // tail rows the row sees (0 for a row past the last)
};

// Scores the chunk's n keys (key = lane) for the warp's rows, takes the online-softmax step and
// adds the weighted values to o. tail_first is the tail row of the chunk's first key, or -1 for
// a segment chunk (every key visible).
template <int kSlices>
__device__ void attend_chunk(const float* shared, float* weights, int dim, int warp, int lane,
                             int n, std::int64_t tail_first, RowState& rows,
                             float (&o)[kRowsPerWarp][kSlices]) {
  const PrefillShared layout{dim};
  const float* keys = shared + layout.keys() + lane * (dim + kKeyPad);
  float s[kRowsPerWarp];
#pragma unroll
  for (int k = 0; k < kRowsPerWarp; ++k) s[k] = 0.0f;
  for (int c = 0; c < dim; c += 4) {
    const float4 key = *reinterpret_cast<const float4*>(keys + c);
#pragma unroll
    for (int k = 0; k < kRowsPerWarp; ++k) {
      const float4 q = *reinterpret_cast<const float4*>(shared + layout.queries() +
                                                        (warp + kWarps * k) * dim + c);
      s[k] = fmaf(q.x, key.x, fmaf(q.y, key.y, fmaf(q.z, key.z, fmaf(q.w, key.w, s[k]))));
    }
  }
#pragma unroll
  for (int k = 0; k < kRowsPerWarp; ++k) {
    const bool visible = lane < n && (tail_first < 0 || tail_first + lane < rows.limit[k]);
    const float score = visible ? s[k] : kMinusInfinity;
    const float m = fmaxf(rows.m[k], lanes_max(score));
    const float base = softmax_base(m);
    const float f = exp2f(rows.m[k] - base);
    const float p = exp2f(score - base);
    rows.l[k] = fmaf(rows.l[k], f, p);
    rows.m[k] = m;
#pragma unroll
    for (int j = 0; j < kSlices; ++j) o[k][j] *= f;
    weights[lane * kRowsPerWarp + k] = p;
  }
  __syncwarp();
  const float* values = shared + layout.values();
  for (int t = 0; t < n; ++t) {
    const float4 p0 = *reinterpret_cast<const float4*>(weights + t * kRowsPerWarp);
    const float4 p1 = *reinterpret_cast<const float4*>(weights + t * kRowsPerWarp + 4);
    const float p[kRowsPerWarp] = {p0.x, p0.y, p0.z, p0.w, p1.x, p1.y, p1.z, p1.w};
#pragma unroll
    for (int j = 0; j < kSlices; ++j) {
      const int c = lane + kLanes * j;
      const float v = c < dim ? values[t * dim + c] : 0.0f;
#pragma unroll
      for (int k = 0; k < kRowsPerWarp; ++k) o[k][j] = fmaf(p[k], v, o[k][j]);
    }
  }
  __syncwarp();
}

// Keys and values [first, first + n) of a segment tile, dequantized into shared memory; rows
// past n are zero.
__device__ void load_segment_chunk(float* shared, int dim, const TileFormat& format,
                                   const std::byte* tile, int first, int n) {
  const PrefillShared layout{dim};
  const std::byte* values = tile + format.values_offset();
  for (int i = int(threadIdx.x); i < kKeys * dim; i += kThreads) {
    const int t = i / dim;
    const int c = i % dim;
    const bool live = t < n;
    shared[layout.keys() + t * (dim + kKeyPad) + c] =
        live ? dequantize(format.keys, tile, first + t, c) : 0.0f;
    shared[layout.values() + i] = live ? dequantize(format.values, values, first + t, c) : 0.0f;
  }
}

// Tail rows [first, first + n) of one head into shared memory; rows past n are zero.
__device__ void load_tail_chunk(float* shared, int dim, const __half* keys, const __half* values,
                                std::int64_t first, int n) {
  const PrefillShared layout{dim};
  for (int i = int(threadIdx.x); i < kKeys * dim; i += kThreads) {
    const int t = i / dim;
    const int c = i % dim;
    const bool live = t < n;
    const std::size_t at = std::size_t(first + t) * std::size_t(dim) + std::size_t(c);
    shared[layout.keys() + t * (dim + kKeyPad) + c] = live ? __half2float(keys[at]) : 0.0f;
    shared[layout.values() + i] = live ? __half2float(values[at]) : 0.0f;
  }
}

template <int kSlices>
__global__ void __launch_bounds__(kThreads)
    prefill_kernel(__grid_constant__ const PrefillParams p) {
  extern __shared__ float4 shared_storage[];
  float* shared = reinterpret_cast<float*>(shared_storage);
  const int dim = p.view.head_dim;
  const PrefillShared layout{dim};
  const int kv_head = int(blockIdx.y);
  const int n_q_heads = p.view.n_kv_heads * p.group;
  const std::int64_t n_rows = p.n_new * p.group;
  const std::int64_t first_row = std::int64_t(blockIdx.x) * kRows;
  const std::int64_t earlier = p.tail_rows - p.n_new;  // tail rows before the first query
  const std::size_t q_stride = std::size_t(n_q_heads) * std::size_t(dim);

  for (int i = int(threadIdx.x); i < kRows * dim; i += kThreads) {
    const std::int64_t row = first_row + i / dim;
    const int c = i % dim;
    float x = 0.0f;
    if (row < n_rows) {
      const std::int64_t token = row / p.group;
      const int head = kv_head * p.group + int(row % p.group);
      x = p.q[std::size_t(token) * q_stride + std::size_t(head) * std::size_t(dim) +
              std::size_t(c)] *
          p.scale;
    }
    shared[layout.queries() + i] = x;
  }

  const int warp = int(threadIdx.x) / kLanes;
  const int lane = int(threadIdx.x) % kLanes;
  RowState rows;
  float o[kRowsPerWarp][kSlices];
#pragma unroll
  for (int k = 0; k < kRowsPerWarp; ++k) {
    const std::int64_t row = first_row + warp + kWarps * k;
    rows.m[k] = kMinusInfinity;
    rows.l[k] = 0.0f;
    rows.limit[k] = row < n_rows ? earlier + row / p.group + 1 : 0;
#pragma unroll
    for (int j = 0; j < kSlices; ++j) o[k][j] = 0.0f;
  }
  float* weights = shared + layout.weights(warp);

  const std::size_t head =
      std::size_t(p.layer) * std::size_t(p.view.n_kv_heads) + std::size_t(kv_head);
  for (const SegmentView& segment : p.view.segments) {
    const std::size_t tile_bytes = segment.format.bytes();
    for (int tile = 0; tile < segment.n_tiles; ++tile) {
      const std::byte* base =
          segment.base + (head * std::size_t(segment.n_tiles) + std::size_t(tile)) * tile_bytes;
      const int valid = segment.valid[tile];
      for (int first = 0; first < valid; first += kKeys) {
        const int n = valid - first < kKeys ? valid - first : kKeys;
        __syncthreads();
        load_segment_chunk(shared, dim, segment.format, base, first, n);
        __syncthreads();
        attend_chunk<kSlices>(shared, weights, dim, warp, lane, n, -1, rows, o);
      }
    }
  }

  const std::int64_t last_row =
      first_row + kRows - 1 < n_rows - 1 ? first_row + kRows - 1 : n_rows - 1;
  const std::int64_t seen = earlier + last_row / p.group + 1;  // tail rows the last row sees
  const std::size_t tail_at = head * std::size_t(p.view.tail.capacity) * std::size_t(dim);
  for (std::int64_t first = 0; first < seen; first += kKeys) {
    const int n = int(seen - first < kKeys ? seen - first : kKeys);
    __syncthreads();
    load_tail_chunk(shared, dim, p.view.tail.keys + tail_at, p.view.tail.values + tail_at, first,
                    n);
    __syncthreads();
    attend_chunk<kSlices>(shared, weights, dim, warp, lane, n, first, rows, o);
  }

#pragma unroll
  for (int k = 0; k < kRowsPerWarp; ++k) {
    const float l = lanes_sum(rows.l[k]);
    const std::int64_t row = first_row + warp + kWarps * k;
    if (row >= n_rows) continue;
    const std::int64_t token = row / p.group;
    const int q_head = kv_head * p.group + int(row % p.group);
    float* out = p.out + std::size_t(token) * q_stride + std::size_t(q_head) * std::size_t(dim);
    const float inverse = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
    for (int j = 0; j < kSlices; ++j) {
      const int c = lane + kLanes * j;
      if (c < dim) out[c] = o[k][j] * inverse;
    }
  }
}

using PrefillKernel = void (*)(PrefillParams);

PrefillKernel prefill_kernel_for(int dim) {
  if (dim <= 64) return prefill_kernel<2>;
  if (dim <= 128) return prefill_kernel<4>;
  return prefill_kernel<8>;
}

}  // namespace

void launch_prefill(const PrefillParams& params, const GpuDevice& device, cudaStream_t stream) {
  const int dim = params.view.head_dim;
  if (dim > 8 * kLanes) {
    throw Error("prefill: head_dim " + std::to_string(dim) +
                " is over the 256 the GPU attention kernels take");
  }
  const std::size_t shared_bytes = PrefillShared{dim}.bytes();
  if (shared_bytes > std::size_t(device.max_shared_per_block)) {
    throw Error("prefill: head_dim " + std::to_string(dim) + " needs " +
                std::to_string(shared_bytes) + " bytes of shared memory; " + device.name +
                " allows " + std::to_string(device.max_shared_per_block));
  }
  const PrefillKernel kernel = prefill_kernel_for(dim);
  COCKTAIL_GPU_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes)));
  const std::int64_t blocks = (params.n_new * params.group + kRows - 1) / kRows;
  const dim3 grid(unsigned(blocks), unsigned(params.view.n_kv_heads));
  kernel<<<grid, kThreads, shared_bytes, stream>>>(params);
  COCKTAIL_GPU_CHECK_LAUNCH("prefill_kernel");
}

}  // namespace cocktail::gpu
