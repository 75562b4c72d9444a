#include "cocktail/gather_table.hpp"

#include <algorithm>

namespace cocktail {

namespace {

// Where each chunk of a plan lies once committed: its first tile in its precision's segment,
// or in the tail (a last FP16 chunk shorter than a tile).
struct ChunkPlace {
  bool in_tail = false;
  std::int64_t first_tile = 0;
};

std::int64_t tiles_of(const ChunkPlan& chunk, int tile_tokens) {
  return (chunk.n_tokens + tile_tokens - 1) / tile_tokens;
}

bool stays_in_tail(const Plan& plan, std::size_t chunk, int tile_tokens) {
  const ChunkPlan& c = plan.chunks[chunk];
  return chunk + 1 == plan.chunks.size() && c.precision == Precision::fp16 &&
         c.n_tokens % tile_tokens != 0;
}

std::vector<ChunkPlace> places_of(const Plan& plan, int tile_tokens) {
  std::vector<ChunkPlace> places(plan.chunks.size());
  std::array<std::int64_t, kAllPrecisions.size()> next_tile{};
  for (int c : plan.storage_order()) {
    ChunkPlace& place = places[std::size_t(c)];
    if (stays_in_tail(plan, std::size_t(c), tile_tokens)) {
      place.in_tail = true;
      continue;
    }
    const ChunkPlan& chunk = plan.chunks[std::size_t(c)];
    place.first_tile = next_tile[std::size_t(chunk.precision)];
    next_tile[std::size_t(chunk.precision)] += tiles_of(chunk, tile_tokens);
  }
  return places;
}

std::int64_t committed_tokens(const Plan& plan, int tile_tokens) {
  std::int64_t n = plan.n_tokens();
  if (!plan.chunks.empty() && stays_in_tail(plan, plan.chunks.size() - 1, tile_tokens)) {
    n -= plan.chunks.back().n_tokens;
  }
  return n;
}

}  // namespace

GatherTable make_gather_table(const Plan& plan, const Plan& committed, int tile_tokens) {
  GatherTable table;
  table.n_committed = committed_tokens(plan, tile_tokens);
  table.committed_before = committed_tokens(committed, tile_tokens);
  const std::vector<ChunkPlace> before = places_of(committed, tile_tokens);
  for (int c : plan.storage_order()) {
    if (stays_in_tail(plan, std::size_t(c), tile_tokens)) continue;
    const ChunkPlan& chunk = plan.chunks[std::size_t(c)];
    const bool was_in_segment = std::size_t(c) < before.size() && !before[std::size_t(c)].in_tail;
    for (std::int64_t t = 0; t < tiles_of(chunk, tile_tokens); ++t) {
      GatherTile tile;
      tile.first_position = chunk.first_token + t * tile_tokens;
      tile.valid = int(std::min<std::int64_t>(tile_tokens, chunk.n_tokens - t * tile_tokens));
      if (was_in_segment) {
        tile.source = {GatherSource::Place::segment, committed.chunks[std::size_t(c)].precision,
                       before[std::size_t(c)].first_tile + t};
      } else {
        tile.source = {GatherSource::Place::tail, Precision::fp16,
                       tile.first_position - table.committed_before};
      }
      table.segments[std::size_t(chunk.precision)].push_back(tile);
    }
  }
  return table;
}

}  // namespace cocktail
