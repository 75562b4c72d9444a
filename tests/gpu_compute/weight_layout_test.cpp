// The device weight layout (backends/gpu_common/weight_layout.hpp): every file type
// converts to units that the kernels' decoder (weight_decode.hpp, compiled here for the host)
// reads back as dequantize_row's values, bit for bit, with zeros in the padding.

#include "gpu_common/weight_layout.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cocktail/dequantize.hpp"
#include "cocktail/error.hpp"
#include "gpu_common/weight_decode.hpp"
#include "support/random_weights.hpp"

namespace cocktail::gpu {
namespace {

using testing::Bytes;
using testing::put_half;

// Random rows as a file stores them: any finite float bit pattern (subnormals too) for the
// float types; random codes with small FP16 scales of either sign for the quantized ones.
Bytes random_rows(TensorType type, std::int64_t rows, std::int64_t cols, std::mt19937& rng) {
  Bytes b(row_bytes(type, cols) * std::size_t(rows));
  std::uniform_int_distribution<std::uint32_t> bits;
  if (type == TensorType::f32) {
    for (std::size_t at = 0; at < b.size(); at += 4) {
      std::uint32_t v;
      do v = bits(rng);
      while (((v >> 23) & 0xFF) == 0xFF);
      std::memcpy(b.data() + at, &v, 4);
    }
    return b;
  }
  if (type == TensorType::f16 || type == TensorType::bf16) {
    const int exponent_shift = type == TensorType::f16 ? 10 : 7;
    const std::uint32_t exponent_ones = type == TensorType::f16 ? 0x1F : 0xFF;
    for (std::size_t at = 0; at < b.size(); at += 2) {
      std::uint16_t v;
      do v = std::uint16_t(bits(rng));
      while (((v >> exponent_shift) & exponent_ones) == exponent_ones);
      std::memcpy(b.data() + at, &v, 2);
    }
    return b;
  }
  for (std::byte& x : b) x = std::byte(bits(rng) & 0xFF);
  std::uniform_real_distribution<float> scale(-0.03f, 0.03f);
  for (std::size_t at = 0; at < b.size(); at += std::size_t(info(type).block_bytes)) {
    switch (type) {
      case TensorType::q8_0:
      case TensorType::q4_0:
        put_half(b, at, scale(rng));
        break;
      case TensorType::q4_1:
      case TensorType::q4_k:  // d and m, or d and dmin
        put_half(b, at, scale(rng));
        put_half(b, at + 2, scale(rng));
        break;
      case TensorType::q6_k:
        put_half(b, at + 208, scale(rng));
        break;
      default:
        break;
    }
  }
  return b;
}

// Column counts: whole blocks, and for the float types some that the padding must complete.
std::vector<std::int64_t> columns_for(TensorType t) {
  const int block = info(t).block_elements;
  if (block == 1) return {1, 3, 45, 96, 100};
  return {block, 3 * block, 512};
}

struct Converted {
  WeightFormat format;
  std::int64_t per_row;
  Bytes units;
  std::vector<CodeGroup> groups;

  float value(std::int64_t row, std::int64_t col) const {
    const int per_unit = unit_elements(format);
    const std::int64_t unit = row * per_row + col / per_unit;
    UnitWords words;
    std::memcpy(words.w, units.data() + unit * kWeightUnitBytes, sizeof words.w);
    const CodeGroup group = has_groups(format) ? groups[std::size_t(unit)] : CodeGroup{0, 0};
    const int e = int(col % per_unit);
    switch (format) {
      case WeightFormat::f32:
        return decode_element<WeightFormat::f32>(words, group, e);
      case WeightFormat::f16:
        return decode_element<WeightFormat::f16>(words, group, e);
      case WeightFormat::bf16:
        return decode_element<WeightFormat::bf16>(words, group, e);
      case WeightFormat::codes8:
        return decode_element<WeightFormat::codes8>(words, group, e);
      case WeightFormat::codes4:
        return decode_element<WeightFormat::codes4>(words, group, e);
    }
    return 0.0f;
  }
};

Converted convert(const WeightView& w, std::int64_t first, std::int64_t count) {
  Converted c{device_format(w.type), units_per_row(device_format(w.type), w.cols), {}, {}};
  c.units.resize(std::size_t(count * c.per_row * kWeightUnitBytes));
  c.groups.resize(has_groups(c.format) ? std::size_t(count * c.per_row) : 0);
  convert_rows(w, first, count, c.units, c.groups);
  return c;
}

TEST(WeightLayout, EveryTypeDecodesToTheFilesValuesWithZeroPadding) {
  std::mt19937 rng(1);
  for (const TensorType t : testing::kAllWeightTypes) {
    for (const std::int64_t cols : columns_for(t)) {
      SCOPED_TRACE(std::string(to_string(t)) + " x " + std::to_string(cols));
      const std::int64_t rows = 5;
      const Bytes file = random_rows(t, rows, cols, rng);
      const WeightView w{t, file.data(), rows, cols};
      // Rows 1-3 on their own, as upload converts a piece at a time.
      const Converted c = convert(w, 1, 3);
      ASSERT_EQ(c.per_row * unit_elements(c.format), padded_cols(cols));
      std::vector<float> want(static_cast<std::size_t>(cols));
      for (std::int64_t r = 0; r < 3; ++r) {
        dequantize_row(t, file.data() + row_bytes(t, cols) * std::size_t(r + 1), cols, want.data());
        for (std::int64_t j = 0; j < padded_cols(cols); ++j) {
          const float got = c.value(r, j);
          if (j >= cols) {
            ASSERT_EQ(got, 0.0f) << "padding row " << r << " column " << j;
          } else if (t == TensorType::f32 || t == TensorType::f16 || t == TensorType::bf16) {
            ASSERT_EQ(std::bit_cast<std::uint32_t>(got),
                      std::bit_cast<std::uint32_t>(want[std::size_t(j)]))
                << "row " << r << " column " << j;
          } else {
            ASSERT_EQ(got, want[std::size_t(j)]) << "row " << r << " column " << j;
          }
        }
      }
    }
  }
}

TEST(WeightLayout, QuantizedTypesGetTheirCodeFormat) {
  EXPECT_EQ(device_format(TensorType::q8_0), WeightFormat::codes8);
  EXPECT_EQ(device_format(TensorType::q6_k), WeightFormat::codes8);
  EXPECT_EQ(device_format(TensorType::q4_0), WeightFormat::codes4);
  EXPECT_EQ(device_format(TensorType::q4_1), WeightFormat::codes4);
  EXPECT_EQ(device_format(TensorType::q4_k), WeightFormat::codes4);
  // A 4-bit row costs 3/4 of a byte a weight, an 8-bit one 3/2.
  EXPECT_EQ(units_per_row(WeightFormat::codes4, 4096) * (kWeightUnitBytes + 8), 4096 * 3 / 4);
  EXPECT_EQ(units_per_row(WeightFormat::codes8, 4096) * (kWeightUnitBytes + 8), 4096 * 3 / 2);
}

TEST(WeightLayout, ConvertRowsRefusesRowsOrSpansThatDoNotFit) {
  std::mt19937 rng(2);
  const Bytes file = random_rows(TensorType::q8_0, 4, 64, rng);
  const WeightView w{TensorType::q8_0, file.data(), 4, 64};
  const std::int64_t per_row = units_per_row(WeightFormat::codes8, 64);
  Bytes units(std::size_t(2 * per_row * kWeightUnitBytes));
  std::vector<CodeGroup> groups(std::size_t(2 * per_row));
  EXPECT_NO_THROW(convert_rows(w, 2, 2, units, groups));
  EXPECT_THROW(convert_rows(w, 3, 2, units, groups), Error);  // past the last row
  EXPECT_THROW(convert_rows(w, 0, 2, std::span(units).first(units.size() - 16), groups), Error);
  EXPECT_THROW(convert_rows(w, 0, 2, units, std::span(groups).first(1)), Error);
}

}  // namespace
}  // namespace cocktail::gpu
