#include "cocktail/stored_tiles.hpp"

namespace cocktail {

namespace {

std::size_t heads_of(const KvShape& shape) {
  return std::size_t(shape.n_layers) * std::size_t(shape.n_kv_heads);
}

// FP16 keys and values of one token of one layer.
std::size_t tail_token_bytes(const KvShape& shape) {
  return shape.token_floats() * 2 * sizeof(std::uint16_t);
}

}  // namespace

TileLists tile_lists(const GatherTable& table) {
  TileLists tiles;
  for (Precision p : kAllPrecisions) {
    for (const GatherTile& t : table.segment(p)) {
      tiles[std::size_t(p)].push_back({t.first_position, t.valid});
    }
  }
  return tiles;
}

std::vector<std::int64_t> storage_positions(const TileLists& tiles, std::int64_t n_committed,
                                            std::int64_t layer_tokens) {
  std::vector<std::int64_t> positions;
  for (const std::vector<TileInfo>& segment : tiles) {
    for (const TileInfo& tile : segment) {
      for (int r = 0; r < tile.valid; ++r) positions.push_back(tile.first_position + r);
    }
  }
  for (std::int64_t t = n_committed; t < layer_tokens; ++t) positions.push_back(t);
  return positions;
}

std::vector<SegmentInfo> segment_infos(const TileLists& tiles, const TileBytes& tile_bytes,
                                       const KvShape& shape, std::int64_t tail_tokens) {
  std::vector<SegmentInfo> out;
  for (Precision p : kAllPrecisions) {
    const std::vector<TileInfo>& segment = tiles[std::size_t(p)];
    if (segment.empty()) continue;
    SegmentInfo info{p, 0, segment.size() * tile_bytes[std::size_t(p)] * heads_of(shape)};
    for (const TileInfo& t : segment) info.n_tokens += t.valid;
    out.push_back(info);
  }
  if (tail_tokens > 0) {
    out.push_back(
        {Precision::fp16, tail_tokens,
         std::size_t(tail_tokens) * tail_token_bytes(shape) * std::size_t(shape.n_layers)});
  }
  return out;
}

std::size_t stored_bytes(const TileLists& tiles, const TileBytes& tile_bytes, const KvShape& shape,
                         std::span<const std::int64_t> layer_tokens, std::int64_t n_committed) {
  std::size_t total = 0;
  for (Precision p : kAllPrecisions) {
    total += tiles[std::size_t(p)].size() * tile_bytes[std::size_t(p)] * heads_of(shape);
  }
  for (std::int64_t n : layer_tokens) {
    total += std::size_t(n - n_committed) * tail_token_bytes(shape);
  }
  return total;
}

}  // namespace cocktail
