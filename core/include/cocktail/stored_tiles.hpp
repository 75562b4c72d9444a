#pragma once

// What a commit leaves in a store's segments, as the host keeps it for every backend alike:
// each precision's tiles (shared by every layer and KV head, since they all follow one plan),
// and what a store reports from them: the positions of a snapshot's rows, segments() and
// bytes(). The tile bytes are the backend's; the counting is the same.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cocktail/gather_table.hpp"
#include "cocktail/kv_shape.hpp"
#include "cocktail/kv_store.hpp"
#include "cocktail/precision.hpp"

namespace cocktail {

// One tile of a segment: tokens [first_position, first_position + valid) in order; the rows
// past `valid` repeat the last token.
struct TileInfo {
  std::int64_t first_position = 0;
  int valid = 0;
};

// Each precision's tiles, in storage order.
using TileLists = std::array<std::vector<TileInfo>, kAllPrecisions.size()>;

// Bytes of one tile of each precision for one layer × KV head (keys and values, metadata and
// padding included).
using TileBytes = std::array<std::size_t, kAllPrecisions.size()>;

// The tiles a commit by `table` leaves.
TileLists tile_lists(const GatherTable& table);

// Original positions of one layer × KV head's rows in storage order: every segment tile's
// `valid` tokens, then the tail's rows [n_committed, layer_tokens).
std::vector<std::int64_t> storage_positions(const TileLists& tiles, std::int64_t n_committed,
                                            std::int64_t layer_tokens);

// KvStore::segments(): each precision that has tiles, its tokens and its bytes over every layer
// and KV head, then the FP16 tail of `tail_tokens` tokens a layer when it has any.
std::vector<SegmentInfo> segment_infos(const TileLists& tiles, const TileBytes& tile_bytes,
                                       const KvShape& shape, std::int64_t tail_tokens);

// KvStore::bytes(): every tile of every layer and KV head, and each layer's tail rows in use
// (layer_tokens[l] - n_committed of them), keys and values in FP16.
std::size_t stored_bytes(const TileLists& tiles, const TileBytes& tile_bytes, const KvShape& shape,
                         std::span<const std::int64_t> layer_tokens, std::int64_t n_committed);

}  // namespace cocktail
