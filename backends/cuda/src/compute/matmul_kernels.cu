#include <span>
#include <string>

#include "cocktail/error.hpp"
#include "compute/kernel_launch.cuh"
#include "compute/matmul_kernels.cuh"
#include "compute/reduce.cuh"
#include "compute/weight_loads.cuh"

namespace cocktail::gpu {
namespace {

// GEMV: a group of kLanes lanes per output row, each lane kGemvUnroll 16-byte loads in flight.
constexpr int kGemvThreads = 128;
constexpr int kGemvRowsPerBlock = kGemvThreads / kLanes;
constexpr int kGemvUnroll = 4;

// GEMM: a block computes kTileRows weight rows × kTileTokens tokens, kColumnQuantum columns at a
// time; each thread a 4 × 4 piece of it.
constexpr int kTileRows = 64;
constexpr int kTileTokens = 64;
constexpr int kTileCols = int(kColumnQuantum);
constexpr int kGemmThreads = 256;
constexpr int kPiece = 4;
static_assert(kTileRows / kPiece * (kTileTokens / kPiece) == kGemmThreads);
// Shared rows padded by 4 floats: still 16-byte aligned for float4 reads, and a tile's
// transposing stores spread over more banks.
constexpr int kTilePad = 4;

// Four consecutive activations from column j of a row of `cols` (zeros past its end). With
// `vectors`, cols is a multiple of 4 and the rows 16-byte aligned, so j (a multiple of 4) is
// either wholly inside the row or past it.
__device__ inline float4 load_x4(const float* row, long long j, long long cols, bool vectors) {
  if (vectors) {
    return j < cols ? *reinterpret_cast<const float4*>(row + j) : make_float4(0, 0, 0, 0);
  }
  return make_float4(j < cols ? row[j] : 0.0f, j + 1 < cols ? row[j + 1] : 0.0f,
                     j + 2 < cols ? row[j + 2] : 0.0f, j + 3 < cols ? row[j + 3] : 0.0f);
}

// acc[t] += the unit's weights · x[t][j0, j0 + unit_elements) for the n tokens, four weights
// decoded at a time (fewer live registers than the whole unit).
template <WeightFormat F>
__device__ inline void accumulate_unit(const UnitWords& raw, CodeGroup group, long long j0,
                                       const float* x, long long cols, int n, bool vectors,
                                       float (&acc)[kGemvMaxTokens]) {
#pragma unroll
  for (int q = 0; q < unit_elements(F) / 4; ++q) {
    float w[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) w[e] = decode_element<F>(raw, group, 4 * q + e);
#pragma unroll
    for (int t = 0; t < int(kGemvMaxTokens); ++t) {
      if (t < n) {
        const float4 xv = load_x4(x + t * cols, j0 + 4 * q, cols, vectors);
        acc[t] = fmaf(w[0], xv.x, acc[t]);
        acc[t] = fmaf(w[1], xv.y, acc[t]);
        acc[t] = fmaf(w[2], xv.z, acc[t]);
        acc[t] = fmaf(w[3], xv.w, acc[t]);
      }
    }
  }
}

// The products of one GEMV launch: their rows laid end to end over the blocks, target i's from
// block first_block[i] on.
struct GemvTargets {
  int count;
  WeightRows w[kMaxGemvTargets];
  float* y[kMaxGemvTargets];
  unsigned first_block[kMaxGemvTargets];
};

// At least 4 blocks an SM in the bounds: ptxas then allows up to 128 registers, where it would
// otherwise pick fewer and spill.
template <WeightFormat F>
__global__ void __launch_bounds__(kGemvThreads, 4)
    gemv_kernel(GemvTargets targets, const float* __restrict__ x, int n, bool vectors) {
  int target = 0;
  while (target + 1 < targets.count && blockIdx.x >= targets.first_block[target + 1]) ++target;
  const WeightRows& w = targets.w[target];
  float* __restrict__ y = targets.y[target];
  const long long row = (long long)(blockIdx.x - targets.first_block[target]) * kGemvRowsPerBlock +
                        threadIdx.x / kLanes;
  if (row >= w.rows) return;  // the whole group: rows are per group
  const int lane = int(threadIdx.x) % kLanes;
  float acc[kGemvMaxTokens] = {};
  for (long long base = lane; base < w.units_per_row; base += kLanes * kGemvUnroll) {
    UnitWords raw[kGemvUnroll];
    CodeGroup group[kGemvUnroll];
#pragma unroll
    for (int r = 0; r < kGemvUnroll; ++r) {  // every load first, then the arithmetic
      const long long unit = base + r * kLanes;
      const bool inside = unit < w.units_per_row;
      raw[r] = inside ? load_unit(w, row, unit) : UnitWords{{0, 0, 0, 0}};
      group[r] = inside ? load_group<F>(w, row, unit) : CodeGroup{0.0f, 0.0f};
    }
#pragma unroll
    for (int r = 0; r < kGemvUnroll; ++r) {
      const long long unit = base + r * kLanes;
      if (unit < w.units_per_row) {
        accumulate_unit<F>(raw[r], group[r], unit * unit_elements(F), x, w.cols, n, vectors, acc);
      }
    }
  }
#pragma unroll
  for (int t = 0; t < int(kGemvMaxTokens); ++t) {
    if (t < n) {
      const float sum = lanes_sum(acc[t]);
      if (lane == 0) y[t * w.rows + row] = sum;
    }
  }
}

// Two blocks an SM: up to 128 registers a thread, where ptxas would otherwise squeeze the f32
// kernel into 64 and spill.
template <WeightFormat F>
__global__ void __launch_bounds__(kGemmThreads, 2)
    gemm_kernel(WeightRows w, const float* __restrict__ x, long long n, float* __restrict__ y) {
  constexpr int kElements = unit_elements(F);
  constexpr int kUnitsPerTileRow = kTileCols / kElements;
  // Transposed tiles, [column][row or token], so that a thread's 4 rows (tokens) are one
  // float4.
  __shared__ __align__(16) float ws[kTileCols][kTileRows + kTilePad];
  __shared__ __align__(16) float xs[kTileCols][kTileTokens + kTilePad];
  const long long row0 = (long long)blockIdx.x * kTileRows;
  const long long token0 = (long long)blockIdx.y * kTileTokens;
  const int tx = int(threadIdx.x) % (kTileTokens / kPiece);
  const int ty = int(threadIdx.x) / (kTileTokens / kPiece);
  float acc[kPiece][kPiece] = {};
  for (long long unit0 = 0; unit0 < w.units_per_row; unit0 += kUnitsPerTileRow) {
    const long long col0 = unit0 * kElements;
    for (int i = int(threadIdx.x); i < kTileRows * kUnitsPerTileRow; i += kGemmThreads) {
      const int r = i / kUnitsPerTileRow;
      const int u = i % kUnitsPerTileRow;
      const long long row = row0 + r;
      const bool inside = row < w.rows;
      const UnitWords raw = inside ? load_unit(w, row, unit0 + u) : UnitWords{{0, 0, 0, 0}};
      const CodeGroup group = inside ? load_group<F>(w, row, unit0 + u) : CodeGroup{0.0f, 0.0f};
#pragma unroll
      for (int e = 0; e < kElements; ++e)
        ws[u * kElements + e][r] = decode_element<F>(raw, group, e);
    }
    for (int i = int(threadIdx.x); i < kTileTokens * kTileCols; i += kGemmThreads) {
      const int t = i / kTileCols;
      const int c = i % kTileCols;
      const long long token = token0 + t;
      const long long col = col0 + c;
      xs[c][t] = token < n && col < w.cols ? x[token * w.cols + col] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTileCols; ++k) {
      const float4 a4 = *reinterpret_cast<const float4*>(&ws[k][ty * kPiece]);
      const float4 b4 = *reinterpret_cast<const float4*>(&xs[k][tx * kPiece]);
      const float a[kPiece] = {a4.x, a4.y, a4.z, a4.w};
      const float b[kPiece] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
      for (int i = 0; i < kPiece; ++i) {
#pragma unroll
        for (int j = 0; j < kPiece; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();  // the tiles are rewritten next
  }
#pragma unroll
  for (int i = 0; i < kPiece; ++i) {
    const long long row = row0 + ty * kPiece + i;
#pragma unroll
    for (int j = 0; j < kPiece; ++j) {
      const long long token = token0 + tx * kPiece + j;
      if (row < w.rows && token < n) y[token * w.rows + row] = acc[i][j];
    }
  }
}

// Whether the GEMV may read x as float4: rows of a multiple of 4 floats from a 16-byte address.
bool float4_rows(const float* x, long long cols) {
  return cols % 4 == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
}

unsigned blocks_for(long long items, long long per_block) {
  return unsigned((items + per_block - 1) / per_block);
}

// One GEMV launch for up to kMaxGemvTargets targets of one format.
void launch_gemv(cudaStream_t stream, std::span<const MatmulTarget> targets, const float* x,
                 int n) {
  GemvTargets batch{};
  batch.count = int(targets.size());
  unsigned blocks = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    batch.w[i] = targets[i].w;
    batch.y[i] = targets[i].y;
    batch.first_block[i] = blocks;
    blocks += blocks_for(targets[i].w.rows, kGemvRowsPerBlock);
  }
  // One x for all, so one answer to whether it reads as float4.
  const bool vectors = float4_rows(x, targets[0].w.cols);
  with_format(targets[0].w.format, [&](auto format) {
    launch_kernel("gemv_kernel", gemv_kernel<decltype(format)::value>, blocks, kGemvThreads, 0,
                  stream, batch, x, n, vectors);
  });
}

void launch_gemm(cudaStream_t stream, const MatmulTarget& target, const float* x, std::int64_t n) {
  const WeightRows& w = target.w;
  const long long token_tiles = (n + kTileTokens - 1) / kTileTokens;
  if (token_tiles > 65535) {
    throw Error("matmul: " + std::to_string(n) + " tokens in one call; at most " +
                std::to_string(65535LL * kTileTokens));
  }
  const dim3 grid(blocks_for(w.rows, kTileRows), unsigned(token_tiles));
  with_format(w.format, [&](auto format) {
    launch_kernel("gemm_kernel", gemm_kernel<decltype(format)::value>, grid, kGemmThreads, 0,
                  stream, w, x, (long long)n, target.y);
  });
}

}  // namespace

void launch_matmul(cudaStream_t stream, std::span<const MatmulTarget> targets, const float* x,
                   std::int64_t n) {
  if (n == 0) return;
  if (n > kGemvMaxTokens) {
    for (const MatmulTarget& target : targets) launch_gemm(stream, target, x, n);
    return;
  }
  // Runs of targets of one format, up to kMaxGemvTargets each, share a launch.
  std::size_t first = 0;
  while (first < targets.size()) {
    std::size_t end = first + 1;
    while (end < targets.size() && end - first < std::size_t(kMaxGemvTargets) &&
           targets[end].w.format == targets[first].w.format) {
      ++end;
    }
    launch_gemv(stream, targets.subspan(first, end - first), x, int(n));
    first = end;
  }
}

}  // namespace cocktail::gpu
