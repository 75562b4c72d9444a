#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "cocktail/plan.hpp"
#include "cocktail/precision.hpp"

namespace cocktail {

// Where a destination tile's rows are before the commit.
struct GatherSource {
  enum class Place : unsigned char { tail, segment };
  Place place = Place::tail;
  // tail: the tail row of the tile's first token. segment: the tile of the previous commit, in
  // the segment of `precision`, that holds the same tokens.
  Precision precision = Precision::fp16;
  std::int64_t index = 0;
};

// One tile of a segment after the commit: `tile_tokens` rows of one precision, the tokens
// [first_position, first_position + valid) in order (a chunk's last tile may be partial; its
// padding rows repeat the last token, so they widen no quantization group's range).
struct GatherTile {
  std::int64_t first_position = 0;
  int valid = 0;
  GatherSource source;
};

// What a commit does to every layer and KV head alike, worked out on the host from the plan:
// the segments, one per precision in storage order, tile by tile, each tile with the place its
// rows come from. A backend gathers the rows, reorders them and quantizes them by it on the
// device (requantizing a tile from its old precision where a re-plan lowered it).
struct GatherTable {
  std::array<std::vector<GatherTile>, kAllPrecisions.size()> segments;
  // Tokens in segments afterwards: the plan's, less a last FP16 chunk shorter than a tile,
  // which stays in the tail at its exact size.
  std::int64_t n_committed = 0;
  // Tokens in segments before: the tail's first n_committed - committed_before rows move out.
  std::int64_t committed_before = 0;

  const std::vector<GatherTile>& segment(Precision p) const { return segments[std::size_t(p)]; }
};

// The table that takes a store whose segments hold `committed` (its last plan, empty at first)
// to `plan`, in tiles of `tile_tokens` rows. The caller has checked that `plan` keeps every
// committed chunk's tokens and only lowers precisions, from FP16 or INT8 (KvStore::commit).
GatherTable make_gather_table(const Plan& plan, const Plan& committed, int tile_tokens);

}  // namespace cocktail
