#pragma once

#include <array>
#include <cstddef>

#include "alignment.hpp"
#include "cocktail/precision.hpp"
#include "cocktail/quant_spec.hpp"
#include "quant/packed_layout.hpp"

namespace cocktail::cpu {

// A tile is the unit of storage and of the attention kernel: `tokens` (= the group size)
// tokens of one layer × KV head at one precision. Its bytes are the packed key block
// (channel-major) followed by the packed value block (token-major), each starting on a cache
// line, so a kernel streams one tile from one place.
struct TileFormat {
  Precision precision = Precision::fp16;
  int tokens = 0;
  int head_dim = 0;
  QuantSpec key_spec;
  QuantSpec value_spec;
  PackedLayout key;
  PackedLayout value;
  std::size_t value_offset = 0;
  std::size_t bytes = 0;

  BlockShape key_shape() const { return {tokens, head_dim, CodeOrder::channel_major}; }
  BlockShape value_shape() const { return {tokens, head_dim, CodeOrder::token_major}; }
};

inline TileFormat make_tile_format(const KvQuantLayout& layout, int head_dim, Precision p) {
  TileFormat f;
  f.precision = p;
  f.tokens = layout.group_size;
  f.head_dim = head_dim;
  f.key_spec = layout.key_spec(p);
  f.value_spec = layout.value_spec(p);
  f.key = packed_layout(f.key_spec, f.key_shape());
  f.value = packed_layout(f.value_spec, f.value_shape());
  f.value_offset = round_up(f.key.total_bytes, kCacheLine);
  f.bytes = f.value_offset + round_up(f.value.total_bytes, kCacheLine);
  return f;
}

using TileFormats = std::array<TileFormat, kAllPrecisions.size()>;

inline TileFormats make_tile_formats(const KvQuantLayout& layout, int head_dim) {
  TileFormats formats;
  for (Precision p : kAllPrecisions)
    formats[std::size_t(p)] = make_tile_format(layout, head_dim, p);
  return formats;
}

}  // namespace cocktail::cpu
