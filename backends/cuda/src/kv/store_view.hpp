#pragma once

// What the attention kernels read of a GpuKvStore (GpuKvStore::view()): plain data, passed to
// kernels by value. Every pointer is device memory of the store's GPU.
//
// Lifetime: a view is good until the store's next append or commit (or its destruction). A
// commit replaces the segment block and the tail; an append that outgrows the tail (only in a
// store without max_tokens) replaces the tail. Either changes GpuKvStore::version(), as does
// every append to layer 0, so a decode plan made at one version and run at another is stale.
// Work enqueued with a view on the stream the store is given is safe: the store waits for that
// stream before it frees anything.
//
// Storage order (what a snapshot lists): the segments in Precision order, each tile's first
// `valid` rows, then the tail rows of the layer.

#include <cstddef>
#include <cstdint>

#include "cocktail/precision.hpp"
#include "gpu_common/tile_format.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

// One precision's segment of every layer × KV head: head `h = layer · n_kv_heads + kv_head`
// keeps its n_tiles tiles back to back from base + h · n_tiles · format.bytes(); a tile is the
// key block then the value block (gpu_common/tile_format.hpp), each `format.keys.tokens` (= the
// layout's group_size) rows. Tile i of every head holds the same tokens: the plan's.
struct SegmentView {
  TileFormat format;
  const std::byte* base = nullptr;  // null when n_tiles is 0; 16-byte aligned
  int n_tiles = 0;
  // Tokens in use of each tile ([n_tiles]), shared by every layer and head: 1 to group_size.
  // Rows [valid, group_size) repeat the tile's last token (so they widen no quantization
  // group) and must get zero weight.
  const int* valid = nullptr;
  // Original position of each tile's first token ([n_tiles]); its rows hold positions
  // first_position + r for r < valid, in order. A tile never holds two chunks.
  const std::int64_t* first_position = nullptr;
};

// The FP16 tail of every layer × KV head: head h keeps its keys at rows
// [h · capacity, h · capacity + n_rows(layer)) of `keys` and its values at the same rows of
// `values`, each row head_dim halves (row r at (h · capacity + r) · head_dim). With
// n_rows(layer) = GpuKvStore::layer_tokens(layer) − n_committed, the tail of a layer holds
// positions [n_committed, layer_tokens(layer)), row r at position n_committed + r. Rows past
// n_rows(layer) are not data. Null (capacity 0) before the first append.
struct TailView {
  const __half* keys = nullptr;
  const __half* values = nullptr;
  std::int64_t capacity = 0;
};

struct StoreView {
  SegmentView segments[kAllPrecisions.size()];  // in Precision order (storage order)
  TailView tail;
  int n_layers = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  std::int64_t n_committed = 0;
};

}  // namespace cocktail::gpu
