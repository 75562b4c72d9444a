// The GPU backend's packed block (backends/gpu_common/tile_format.hpp), as host arithmetic:
// every code has one slot and every slot one code, every element one group whose constants are
// where scale_index says, and the store's tiles have the sizes the architecture table gives.
#include "gpu_common/tile_format.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace cocktail::gpu {
namespace {

constexpr Precision kPacked[] = {Precision::int8, Precision::nf4, Precision::int4, Precision::int2};

std::string describe(const BlockFormat& f) {
  return std::string(to_string(f.precision)) + " per-" + std::string(to_string(f.axis)) + " " +
         std::to_string(f.tokens) + "x" + std::to_string(f.head_dim) + " groups of " +
         std::to_string(f.group_size);
}

TEST(GpuTileFormat, EveryCodeHasItsOwnSlotAndSlotChannelInvertsIt) {
  for (const Precision p : kPacked) {
    for (const int head_dim : {32, 64, 96, 128}) {
      const BlockFormat f{p, QuantAxis::per_token, 2, head_dim, 32};
      SCOPED_TRACE(describe(f));
      std::set<std::pair<std::size_t, int>> slots;
      for (int t = 0; t < f.tokens; ++t) {
        for (int c = 0; c < head_dim; ++c) {
          const CodeSlot slot = f.code_slot(t, c);
          ASSERT_LT(slot.byte, std::size_t(t + 1) * f.row_bytes());
          ASSERT_GE(slot.byte, std::size_t(t) * f.row_bytes());
          ASSERT_LT(slot.shift, 8);
          ASSERT_EQ(slot.shift % f.bits(), 0);
          EXPECT_TRUE(slots.insert({slot.byte, slot.shift}).second) << "channel " << c;
          const auto row_byte = int(slot.byte - std::size_t(t) * f.row_bytes());
          EXPECT_EQ(f.slot_channel(row_byte, slot.shift / f.bits()), c);
        }
      }
    }
  }
}

// A 16-byte unit holds 16k consecutive channels, byte j channel j + 16m; an INT2 row of 96
// channels ends in an 8-byte half unit, byte j channel 64 + j + 8m.
TEST(GpuTileFormat, PlanarUnitsMatchTheDocumentedLayout) {
  const BlockFormat int4{Precision::int4, QuantAxis::per_token, 1, 64, 32};
  EXPECT_EQ(int4.code_slot(0, 5).byte, 5u);
  EXPECT_EQ(int4.code_slot(0, 21).byte, 5u);
  EXPECT_EQ(int4.code_slot(0, 21).shift, 4);
  EXPECT_EQ(int4.code_slot(0, 37).byte, 16u + 5u);
  const BlockFormat int2{Precision::int2, QuantAxis::per_token, 2, 96, 32};
  EXPECT_EQ(int2.row_bytes(), 24u);
  EXPECT_EQ(int2.code_slot(0, 16 * 3 + 7).byte, 7u);
  EXPECT_EQ(int2.code_slot(0, 16 * 3 + 7).shift, 6);
  EXPECT_EQ(int2.code_slot(1, 64 + 8 * 2 + 3).byte, 24u + 16u + 3u);
  EXPECT_EQ(int2.code_slot(1, 64 + 8 * 2 + 3).shift, 4);
}

TEST(GpuTileFormat, EveryElementIsInTheGroupItsScaleIndexNames) {
  for (const Precision p : kPacked) {
    for (const QuantAxis axis : {QuantAxis::per_channel, QuantAxis::per_token}) {
      for (const int group : {32, 64}) {
        for (const auto& [tokens, head_dim] : {std::pair{group, 64}, std::pair{48, 96}}) {
          const BlockFormat f{p, axis, tokens, head_dim, group};
          SCOPED_TRACE(describe(f));
          std::vector<int> seen(std::size_t(tokens) * std::size_t(head_dim), 0);
          for (std::size_t g = 0; g < f.n_scales(); ++g) {
            const GroupSpan span = f.group(g);
            ASSERT_GT(span.length, 0);
            ASSERT_LE(span.length, group);
            for (int i = 0; i < span.length; ++i) {
              const int t = span.token_at(i);
              const int c = span.channel_at(i);
              ASSERT_LT(t, tokens);
              ASSERT_LT(c, head_dim);
              EXPECT_EQ(f.scale_index(t, c), g);
              ++seen[std::size_t(t) * std::size_t(head_dim) + std::size_t(c)];
            }
          }
          for (int n : seen) ASSERT_EQ(n, 1);
        }
      }
    }
  }
}

TEST(GpuTileFormat, PartsAreAlignedAndTheStoreTilesHaveTheTableSizes) {
  const KvQuantLayout layout;  // groups of 32, keys per channel, values per token
  const std::pair<Precision, std::size_t> want[] = {{Precision::fp16, 16384},
                                                    {Precision::int8, 9216},
                                                    {Precision::nf4, 4608},
                                                    {Precision::int4, 5120},
                                                    {Precision::int2, 3072}};
  for (const auto& [p, bytes] : want) {
    const TileFormat f = tile_format(p, layout, 128);
    EXPECT_EQ(f.bytes(), bytes) << to_string(p);
    EXPECT_EQ(f.values_offset() % kTileAlign, 0u);
    for (const BlockFormat& b : {f.keys, f.values}) {
      EXPECT_EQ(b.scales_offset() % kTileAlign, 0u);
      EXPECT_EQ(b.zeros_offset() % kTileAlign, 0u);
      EXPECT_EQ(b.bytes() % kTileAlign, 0u);
    }
  }
  // A quantizer block whose last token group is partial: [2][96] scales and zeros.
  const BlockFormat partial{Precision::int2, QuantAxis::per_channel, 48, 96, 32};
  EXPECT_EQ(partial.n_scales(), 192u);
  EXPECT_EQ(partial.bytes(), 48u * 24 + 192 * 2 + 192 * 2);
}

}  // namespace
}  // namespace cocktail::gpu
