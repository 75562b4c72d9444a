// How encoder attention cuts a batch into launches (backends/cuda/src/compute/encoder_tiles.hpp):
// every query of every sequence in exactly one tile, which names its sequence, and no launch
// over its capacity.

#include "compute/encoder_tiles.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace cocktail::gpu {
namespace {

TEST(EncoderTiles, EveryQueryOnceWithItsSequence) {
  std::vector<std::int64_t> lengths = {5, 1, 33, 17, 32, 64, 512};
  for (int i = 0; i < 150; ++i) lengths.push_back(1 + i % 40);  // more tiles than a launch holds
  std::vector<std::int64_t> firsts;
  std::int64_t tokens = 0;
  for (const std::int64_t length : lengths) {
    firsts.push_back(tokens);
    tokens += length;
  }
  std::vector<int> seen(static_cast<std::size_t>(tokens), 0);
  int launches = 0;
  std::int64_t tiles = 0;
  for_each_encoder_launch(lengths, [&](const EncoderLaunch& launch) {
    ++launches;
    ASSERT_GT(launch.count, 0);
    ASSERT_LE(launch.count, kEncoderTilesPerLaunch);
    for (int t = 0; t < launch.count; ++t) {
      const EncoderTile& tile = launch.tiles[t];
      ASSERT_LT(tile.first_query, tile.length);
      ASSERT_EQ(tile.first_query % kEncoderQueriesPerTile, 0);
      for (int q = tile.first_query;
           q < std::min(tile.length, tile.first_query + kEncoderQueriesPerTile); ++q) {
        ++seen[std::size_t(tile.first_token + q)];
      }
    }
    tiles += launch.count;
  });
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    for (std::int64_t q = 0; q < lengths[s]; ++q) {
      ASSERT_EQ(seen[std::size_t(firsts[s] + q)], 1) << "sequence " << s << " query " << q;
    }
  }
  EXPECT_EQ(launches, (tiles + kEncoderTilesPerLaunch - 1) / kEncoderTilesPerLaunch);
}

TEST(EncoderTiles, AnEmptyBatchLaunchesNothing) {
  int launches = 0;
  for_each_encoder_launch({}, [&](const EncoderLaunch&) { ++launches; });
  EXPECT_EQ(launches, 0);
}

}  // namespace
}  // namespace cocktail::gpu
