// The GPU decode's work split (backends/gpu_common/decode_split.hpp): pure host
// arithmetic, so it is checked here without a GPU.

#include "gpu_common/decode_split.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace cocktail::gpu {
namespace {

// Every range of the split, as [begin, end) pairs in order.
std::vector<std::pair<std::int64_t, std::int64_t>> ranges_of(const DecodeSplit& s) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (int r = 0; r < s.splits; ++r) {
    out.emplace_back(range_begin(s.tiles, s.splits, r), range_begin(s.tiles, s.splits, r + 1));
  }
  return out;
}

TEST(GpuDecodeSplit, CountsSegmentTilesAndTheTailCutIntoTiles) {
  const int segments[] = {3, 0, 2, 5, 7};
  EXPECT_EQ(count_decode_tiles(segments, 0, 32), 17);
  EXPECT_EQ(count_decode_tiles(segments, 1, 32), 18);
  EXPECT_EQ(count_decode_tiles(segments, 32, 32), 18);
  EXPECT_EQ(count_decode_tiles(segments, 33, 32), 19);
  EXPECT_EQ(count_decode_tiles(segments, 45, 64), 18);
  const int none[] = {0, 0, 0, 0, 0};
  EXPECT_EQ(count_decode_tiles(none, 45, 32), 2);
}

TEST(GpuDecodeSplit, BatchesQueryHeadsEvenlyUpToEight) {
  struct Case {
    int group, batches, heads;
  };
  for (const Case c : {Case{1, 1, 1}, Case{3, 1, 3}, Case{4, 1, 4}, Case{8, 1, 8}, Case{9, 2, 5},
                       Case{12, 2, 6}, Case{16, 2, 8}, Case{17, 3, 6}, Case{32, 4, 8}}) {
    const HeadBatches b = batch_query_heads(c.group);
    EXPECT_EQ(b.batches, c.batches) << "group " << c.group;
    EXPECT_EQ(b.heads, c.heads) << "group " << c.group;
    EXPECT_LE(b.heads, kMaxBatchHeads);
    EXPECT_GE(b.batches * b.heads, c.group);
    EXPECT_LT((b.batches - 1) * b.heads, c.group) << "no empty batch";
  }
}

TEST(GpuDecodeSplit, RangesCoverEveryTileOnceInOrder) {
  for (const std::int64_t tiles : {1, 3, 11, 12, 100, 4096, 4097}) {
    for (const int resident : {1, 132, 528}) {
      const DecodeSplit s = split_decode(tiles, 8, batch_query_heads(1), resident);
      ASSERT_EQ(s.splits, s.blocks * kDecodeWarps);
      const auto ranges = ranges_of(s);
      EXPECT_EQ(ranges.front().first, 0);
      EXPECT_EQ(ranges.back().second, tiles);
      std::int64_t shortest = tiles, longest = 0;
      for (std::size_t r = 0; r < ranges.size(); ++r) {
        if (r > 0) {
          EXPECT_EQ(ranges[r].first, ranges[r - 1].second);
        }
        EXPECT_LE(ranges[r].first, ranges[r].second);
        shortest = std::min(shortest, ranges[r].second - ranges[r].first);
        longest = std::max(longest, ranges[r].second - ranges[r].first);
      }
      EXPECT_LE(longest - shortest, 1) << tiles << " tiles, " << resident << " blocks";
    }
  }
}

TEST(GpuDecodeSplit, FillsTheGpuWithRangesOfAFewTiles) {
  // 128K tokens in 32-token tiles, 8 KV heads, GQA 1, on 132 SMs holding 4 blocks each.
  const DecodeSplit big = split_decode(4096, 8, batch_query_heads(1), 4 * 132);
  EXPECT_GE(std::int64_t(big.blocks) * 8, 4 * 132) << "every resident block has work";
  EXPECT_LT(std::int64_t(big.blocks - 1) * 8, 4 * 132) << "no second wave of blocks";
  EXPECT_GE(big.tiles / big.splits, kMinTilesPerRange);

  // A short store is not cut below kMinTilesPerRange tiles a range (but one block's warps may
  // have less when there are fewer tiles than that).
  const DecodeSplit small = split_decode(40, 8, batch_query_heads(1), 4 * 132);
  EXPECT_EQ(small.splits, 12);
  EXPECT_GE(small.tiles / small.splits, 3);
  const DecodeSplit tiny = split_decode(2, 2, batch_query_heads(3), 4 * 132);
  EXPECT_EQ(tiny.blocks, 1);
  EXPECT_EQ(tiny.splits, kDecodeWarps);

  // Batches of query heads are units of work like KV heads.
  const DecodeSplit batched = split_decode(4096, 8, batch_query_heads(16), 4 * 132);
  EXPECT_EQ(batched.batches.batches, 2);
  EXPECT_LT(std::int64_t(batched.blocks - 1) * 16, 4 * 132);
  EXPECT_GE(std::int64_t(batched.blocks) * 16, 4 * 132);
}

}  // namespace
}  // namespace cocktail::gpu
