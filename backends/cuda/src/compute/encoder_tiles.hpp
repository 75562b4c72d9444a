#pragma once

// How encoder_attention's work is cut: each sequence's queries in tiles of
// kEncoderQueriesPerTile, a block per tile and head, and the tiles in launches of up to
// kEncoderTilesPerLaunch, which travel in the kernel's parameters (no device memory, no copy).
// Plain C++, tested on any machine.

#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "cocktail/error.hpp"

namespace cocktail::gpu {

inline constexpr int kEncoderQueriesPerTile = 32;
inline constexpr int kEncoderTilesPerLaunch = 128;

// kEncoderQueriesPerTile queries (fewer at a sequence's end) of the sequence of `length`
// tokens starting at token `first_token` of the batch, from its query `first_query` on.
struct EncoderTile {
  std::int32_t first_token;
  std::int32_t length;
  std::int32_t first_query;
};

struct EncoderLaunch {
  int count = 0;
  EncoderTile tiles[kEncoderTilesPerLaunch];
};

// Calls launch(const EncoderLaunch&) for each launch that covers the batch of sequences of
// `lengths` (positive) laid end to end. Throws an Error when the batch has more tokens than
// the tiles' 32-bit indices hold.
template <class Launch>
void for_each_encoder_launch(std::span<const std::int64_t> lengths, Launch&& launch) {
  EncoderLaunch batch;
  std::int64_t first = 0;
  for (const std::int64_t length : lengths) {
    if (first + length > std::numeric_limits<std::int32_t>::max()) {
      throw Error("encoder_attention: a batch of more than " +
                  std::to_string(std::numeric_limits<std::int32_t>::max()) + " tokens");
    }
    for (std::int64_t query = 0; query < length; query += kEncoderQueriesPerTile) {
      batch.tiles[batch.count++] = {std::int32_t(first), std::int32_t(length), std::int32_t(query)};
      if (batch.count == kEncoderTilesPerLaunch) {
        launch(batch);
        batch.count = 0;
      }
    }
    first += length;
  }
  if (batch.count > 0) launch(batch);
}

}  // namespace cocktail::gpu
