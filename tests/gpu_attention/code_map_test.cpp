// Where the GPU decode kernel reads codes (backends/cuda/src/attention/code_map.hpp), checked
// against the tile format's own definition of where each code sits (BlockFormat::code_slot).

#include "attention/code_map.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_common/tile_format.hpp"

namespace cocktail::gpu {
namespace {

constexpr Precision kPacked[] = {Precision::int8, Precision::nf4, Precision::int4, Precision::int2};
constexpr int kHeadDims[] = {32, 64, 96, 128, 160, 192, 256};

BlockFormat block(Precision p, int head_dim) {
  return {p, QuantAxis::per_token, 32, head_dim, 32};
}

std::string where(Precision p, int head_dim, int at) {
  return std::string(to_string(p)) + ", head_dim " + std::to_string(head_dim) + ", " +
         std::to_string(at);
}

// Every channel of every slice is read once, from the byte and bits code_slot names.
TEST(GpuCodeMap, KeySlicesReadEveryChannelWhereTheFormatPutsIt) {
  for (const Precision p : kPacked) {
    for (const int dim : kHeadDims) {
      const BlockFormat f = block(p, dim);
      for (int slice = 0; slice < dim / 32; ++slice) {
        SCOPED_TRACE(where(p, dim, slice));
        const SliceLoad load = slice_load(p, dim, slice);
        const PlaneSpan planes = slice_planes(p, dim, slice);
        EXPECT_LE(load.offset + load.bytes, int(f.row_bytes()));
        EXPECT_EQ(load.offset % (load.bytes >= 16 ? 16 : 8), 0);
        std::vector<int> seen(32, 0);
        for (int plane = planes.first; plane < planes.first + planes.count; ++plane) {
          for (int word = 0; word < load.bytes / 4; ++word) {
            const int first = slice_channel(p, dim, slice, word, plane);
            for (int i = 0; i < 4; ++i) {
              const int c = first + i;
              ASSERT_GE(c, 32 * slice);
              ASSERT_LT(c, 32 * slice + 32);
              ++seen[std::size_t(c - 32 * slice)];
              const CodeSlot slot = f.code_slot(0, c);
              EXPECT_EQ(slot.byte, std::size_t(load.offset + 4 * word + i)) << "channel " << c;
              EXPECT_EQ(slot.shift, plane * f.bits()) << "channel " << c;
            }
          }
        }
        for (int c = 0; c < 32; ++c) EXPECT_EQ(seen[std::size_t(c)], 1) << "channel " << c;
      }
    }
  }
}

TEST(GpuCodeMap, ValueRunsAreOneWordWhereTheFormatPutsThem) {
  for (const Precision p : kPacked) {
    for (const int dim : kHeadDims) {
      const BlockFormat f = block(p, dim);
      for (int run = 0; run < dim / 4; ++run) {
        SCOPED_TRACE(where(p, dim, run));
        const RunWord w = run_word(p, dim, run);
        EXPECT_EQ(w.byte % 4, 0);
        EXPECT_LE(w.byte + 4, int(f.row_bytes()));
        for (int i = 0; i < 4; ++i) {
          const CodeSlot slot = f.code_slot(0, 4 * run + i);
          EXPECT_EQ(slot.byte, std::size_t(w.byte + i)) << "channel " << 4 * run + i;
          EXPECT_EQ(slot.shift, w.shift) << "channel " << 4 * run + i;
        }
      }
    }
  }
}

TEST(GpuCodeMap, Fp16RunsAndSlicesArePlainHalves) {
  const BlockFormat f = block(Precision::fp16, 128);
  for (int run = 0; run < 32; ++run) {
    EXPECT_EQ(std::size_t(run_word(Precision::fp16, 128, run).byte), f.code_slot(0, 4 * run).byte);
  }
  for (int slice = 0; slice < 4; ++slice) {
    const SliceLoad load = slice_load(Precision::fp16, 128, slice);
    EXPECT_EQ(std::size_t(load.offset), f.code_slot(0, 32 * slice).byte);
    EXPECT_EQ(load.bytes, 64);
  }
}

}  // namespace
}  // namespace cocktail::gpu
