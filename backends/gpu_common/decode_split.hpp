#pragma once

// How a decode step's attention is cut into work for the GPU: plain host arithmetic (and the
// range bounds the kernel shares), so that it can be tested without a GPU.
//
// A KV head's tiles are walked in storage order: each precision's segment, then the FP16 tail
// cut into tiles of group_size tokens (the last one partial). That sequence is cut into
// `splits` contiguous ranges; each range is one warp's work and leaves one partial softmax
// state per query head, merged by log-sum-exp afterwards. A block holds kDecodeWarps warps of
// one KV head and one batch of its query heads (the GQA group, or a part of it when the group
// is larger than kMaxBatchHeads), so every code a warp loads serves all heads of the batch.

#include <algorithm>
#include <cstdint>
#include <span>

#include "gpu_common/tile_format.hpp"

namespace cocktail::gpu {

inline constexpr int kDecodeWarps = 4;
// A range shorter than this would spend more on its partial state and the merge than it saves.
inline constexpr std::int64_t kMinTilesPerRange = 4;
// Query heads one block serves at most; a larger GQA group is cut into batches.
inline constexpr int kMaxBatchHeads = 8;

// A GQA group of query heads cut into `batches` batches of at most `heads` heads each (the last
// may have fewer), as even as they come.
struct HeadBatches {
  int batches = 1;
  int heads = 1;
};

inline HeadBatches batch_query_heads(int group) {
  const int batches = (group + kMaxBatchHeads - 1) / kMaxBatchHeads;
  return {batches, (group + batches - 1) / batches};
}

struct DecodeSplit {
  std::int64_t tiles = 0;  // per KV head: every segment's tiles, then the tail's
  HeadBatches batches;
  int blocks = 1;             // blocks per (KV head, batch)
  int splits = kDecodeWarps;  // ranges per (KV head, batch): blocks · kDecodeWarps
};

// Tiles of one KV head: the segments' tiles and ceil(tail_rows / tile_tokens) tail tiles.
inline std::int64_t count_decode_tiles(std::span<const int> segment_tiles, std::int64_t tail_rows,
                                       int tile_tokens) {
  std::int64_t tiles = (tail_rows + tile_tokens - 1) / tile_tokens;
  for (const int n : segment_tiles) tiles += n;
  return tiles;
}

// The split of `tiles` tiles of each of n_kv_heads KV heads, their query heads batched as
// `batches`, for a GPU that holds `resident_blocks` blocks of the kernel at once: as many ranges
// as fill it, unless that would make them shorter than kMinTilesPerRange.
inline DecodeSplit split_decode(std::int64_t tiles, int n_kv_heads, HeadBatches batches,
                                int resident_blocks) {
  DecodeSplit s;
  s.tiles = tiles;
  s.batches = batches;
  const std::int64_t units = std::int64_t(n_kv_heads) * batches.batches;
  const std::int64_t resident_ranges = std::int64_t(resident_blocks) * kDecodeWarps;
  const std::int64_t wanted = (resident_ranges + units - 1) / units;
  const std::int64_t ranges =
      std::max<std::int64_t>(1, std::min(wanted, tiles / kMinTilesPerRange));
  s.blocks = int((ranges + kDecodeWarps - 1) / kDecodeWarps);
  s.splits = s.blocks * kDecodeWarps;
  return s;
}

// First tile of range `split` of `splits` over `tiles` tiles; range r is
// [range_begin(r), range_begin(r + 1)), so the ranges cover every tile once, in order, and
// differ in length by at most one.
COCKTAIL_HOST_DEVICE constexpr std::int64_t range_begin(std::int64_t tiles, int splits, int split) {
  return tiles * split / splits;
}

}  // namespace cocktail::gpu
