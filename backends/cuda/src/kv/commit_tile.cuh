#pragma once

// The body of the commit kernel (kv/commit_kernels.cu), one destination tile of one layer × KV
// head: copied from the previous commit when it keeps its precision, else gathered from the
// FP16 tail or dequantized from the previous commit, then quantized (quant/quantize_block.cuh).
// A header of its own so that a host test can run it as one thread.

#include <cstddef>
#include <cstdint>

#include "kv/commit_kernels.cuh"
#include "kv/tile_codes.cuh"
#include "quant/quantize_block.cuh"

namespace cocktail::gpu {

// The rows of one destination tile, for one part of one head: row t is the tile's token
// min(t, valid − 1), so padding rows repeat the last token and widen no group's range.
struct TileRowsOf {
  int head = 0;
  int part = 0;
  int valid = 1;
  std::int64_t first_position = 0;

  __device__ int row(int t) const { return t < valid ? t : valid - 1; }
  __device__ unsigned long long site(int t, int c) const {
    return commit_site({head, first_position + row(t), part, c});
  }
};

// A tile's rows in the FP16 tail: `rows` is the tail row of its first token.
struct TailRows {
  TileRowsOf of;
  const __half* rows;
  int head_dim;

  __device__ float operator()(int t, int c) const {
    return __half2float(rows[std::size_t(of.row(t)) * std::size_t(head_dim) + std::size_t(c)]);
  }
  __device__ unsigned long long site(int t, int c) const { return of.site(t, c); }
};

// A tile's rows in a block of the previous commit, dequantized.
struct StoredRows {
  TileRowsOf of;
  BlockFormat format;
  const std::byte* block;

  __device__ float operator()(int t, int c) const {
    return dequantize(format, block, of.row(t), c);
  }
  __device__ unsigned long long site(int t, int c) const { return of.site(t, c); }
};

__device__ inline void copy_tile(const std::byte* from, std::byte* to, std::size_t bytes) {
  const auto* src = reinterpret_cast<const uint4*>(from);
  auto* dst = reinterpret_cast<uint4*>(to);
  for (std::size_t i = threadIdx.x; i < bytes / sizeof(uint4); i += blockDim.x) dst[i] = src[i];
}

__device__ inline std::byte* tile_at(const SegmentBlock& block, std::size_t p, const TileFormat& f,
                                     int head, std::int64_t index) {
  return block.base[p] +
         (std::size_t(head) * std::size_t(block.n_tiles[p]) + std::size_t(index)) * f.bytes();
}

// Every thread of the thread block calls it with the same tile and head: the whole block takes
// one branch, so quantize_block's barriers are reached by all of its threads.
__device__ inline void commit_tile(const CommitArgs& a, unsigned table_index, int head) {
  const DeviceGatherTile tile = a.table[table_index];
  const auto p = std::size_t(tile.precision);
  const TileFormat f = a.formats[p];
  std::byte* to = tile_at(a.to, p, f, head, tile.index);
  const TileRowsOf keys{head, 0, tile.valid, tile.first_position};
  const TileRowsOf values{head, 1, tile.valid, tile.first_position};
  if (!tile.from_tail) {
    const auto sp = std::size_t(tile.source_precision);
    const TileFormat old = a.formats[sp];
    const std::byte* from = tile_at(a.from, sp, old, head, tile.source_index);
    if (sp == p) {
      copy_tile(from, to, f.bytes());
      return;
    }
    quantize_block(f.keys, a.range, StoredRows{keys, old.keys, from}, to, a.fault);
    quantize_block(f.values, a.range, StoredRows{values, old.values, from + old.values_offset()},
                   to + f.values_offset(), a.fault);
    return;
  }
  const int d = f.keys.head_dim;
  const std::size_t first =
      (std::size_t(head) * std::size_t(a.tail_capacity) + std::size_t(tile.source_index)) *
      std::size_t(d);
  quantize_block(f.keys, a.range, TailRows{keys, a.tail_keys + first, d}, to, a.fault);
  quantize_block(f.values, a.range, TailRows{values, a.tail_values + first, d},
                 to + f.values_offset(), a.fault);
}

}  // namespace cocktail::gpu
