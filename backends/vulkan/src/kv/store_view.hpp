#pragma once

// What the attention kernels read of a VulkanKvStore (VulkanKvStore::view()): the buffer ranges
// to bind, and the sizes and offsets to pass as push constants. Tiles use the GPU tile format
// (gpu_common/tile_format.hpp; shaders/tile_codes.glsl reads it in GLSL).
//
// Bindings: every range here fits one storage binding (maxStorageBufferRange, 128 MiB on
// lavapipe) and starts where a binding may (minStorageBufferOffsetAlignment), so a kernel binds
// it as it is and addresses it from byte 0. Each precision's tiles of one layer are one range,
// and so are each layer's tail keys and tail values; a layer whose range would exceed a binding
// is an Error of the commit or append that would make it.
//
// Lifetime: a view is good until the store's next append or commit (or its destruction). A
// commit replaces the segments and the tail; an append that outgrows the tail (only in a store
// without max_tokens) replaces the tail. Either changes VulkanKvStore::version(), as does every
// append to layer 0, so a decode plan made at one version and run at another is stale. Work
// enqueued with a view on the stream the store is given is safe: the store waits for that stream
// before it frees anything.
//
// Storage order (what a snapshot lists): the segments in Precision order, each tile's first
// `valid` rows, then the tail rows of the layer.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cocktail/precision.hpp"
#include "gpu_common/tile_format.hpp"
#include "memory/vulkan_buffer.hpp"

namespace cocktail::vulkan {

// One precision's segment. Tile i of every layer and KV head holds the same tokens: the plan's.
struct SegmentView {
  gpu::TileFormat format;
  // Tiles of each layer × KV head. 0 when the precision has none: then every range below is a
  // small placeholder, bindable but no data.
  int n_tiles = 0;
  // Bytes of one tile (format.bytes()): the key block at byte 0 of the tile, the value block
  // at format.values_offset().
  std::uint32_t tile_bytes = 0;
  // [layer]: that layer's tiles, n_kv_heads · n_tiles of them, KV head h's tile i at byte
  // (h · n_tiles + i) · tile_bytes of the range.
  std::vector<BufferRange> layers;
  // The tile table, shared by every layer and head: an ivec2 per tile ([n_tiles]), x the
  // original position of the tile's first token, y its tokens in use (`valid`, 1 to
  // group_size). Its rows hold positions x + r for r < y, in order; rows [y, group_size) repeat
  // the tile's last token (so they widen no quantization group) and must get zero weight. A
  // tile never holds two chunks.
  BufferRange table;
};

// The FP16 tail of every layer × KV head: layer l's `keys[l]` and `values[l]` are each
// [n_kv_heads][capacity][head_dim] halves (two a 32-bit word, the lower first), KV head h's row
// r at half (h · capacity + r) · head_dim. Row r of layer l holds position n_committed + r, for
// r < rows[l]; rows past that are not data. Before the first append (capacity 0) the ranges are
// a small placeholder, bindable but no data.
struct TailView {
  std::vector<BufferRange> keys;    // [layer]
  std::vector<BufferRange> values;  // [layer]
  std::int64_t capacity = 0;
  std::vector<std::int64_t> rows;  // [layer]: layer_tokens(layer) - n_committed
};

struct StoreView {
  std::array<SegmentView, kAllPrecisions.size()> segments;  // in Precision order
  TailView tail;
  int n_layers = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  std::int64_t n_committed = 0;
};

}  // namespace cocktail::vulkan
