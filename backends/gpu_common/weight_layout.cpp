#include "gpu_common/weight_layout.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "cocktail/dequantize.hpp"
#include "cocktail/error.hpp"

namespace cocktail::gpu {

namespace {

float half_at(const std::uint8_t* p) {
  std::uint16_t bits;
  std::memcpy(&bits, p, sizeof bits);
  return f32_from_f16(bits);
}

// Each converter below writes one block of its type into its units (zeroed) and their groups;
// they mirror core/src/dequantize.cpp's formulas, and the CPU tests check that
// scale · code + offset gives its values bit for bit.

// Q8_0 (fp16 d, 32 int8 q; x = d·q): the codes as they are, in two units of 16.
void q8_0_block(const std::uint8_t* b, std::uint8_t* units, CodeGroup* groups) {
  std::memcpy(units, b + 2, 32);
  groups[0] = groups[1] = {half_at(b), 0.0f};
}

// Q4_0 (fp16 d, 16 bytes of nibbles; x = d·(q − 8) = d·q − 8d, exact either way): its
// nibbles are already in a unit's order.
void q4_0_block(const std::uint8_t* b, std::uint8_t* units, CodeGroup* groups) {
  const float d = half_at(b);
  std::memcpy(units, b + 2, 16);
  groups[0] = {d, -8.0f * d};
}

// Q4_1 (fp16 d, fp16 m, nibbles as Q4_0; x = d·q + m).
void q4_1_block(const std::uint8_t* b, std::uint8_t* units, CodeGroup* groups) {
  std::memcpy(units, b + 4, 16);
  groups[0] = {half_at(b), half_at(b + 2)};
}

// Q4_K (fp16 d, fp16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles; x =
// (d·scale)·q − dmin·min per sub-block of 32): 64 elements read 32 bytes, sub-block 2c the low
// nibbles and 2c + 1 the high ones, which pair up into units as elements i and i + 16.
void q4_k_block(const std::uint8_t* b, std::uint8_t* units, CodeGroup* groups) {
  const float d = half_at(b);
  const float dmin = half_at(b + 2);
  const std::uint8_t* scales = b + 4;
  const std::uint8_t* qs = b + 16;
  for (int c = 0; c < 4; ++c, qs += 32) {
    std::uint8_t* low = units + kWeightUnitBytes * (2 * c);
    std::uint8_t* high = low + kWeightUnitBytes;
    for (int i = 0; i < 16; ++i) {
      low[i] = std::uint8_t((qs[i] & 0x0F) | (qs[i + 16] << 4));
      high[i] = std::uint8_t((qs[i] >> 4) | (qs[i + 16] & 0xF0));
    }
    for (int s = 2 * c; s < 2 * c + 2; ++s) {
      const auto [scale, min] = q4_k_scale_min(scales, s);
      groups[s] = {d * float(scale), -(dmin * float(min))};
    }
  }
}

// Q6_K (128 bytes of low nibbles, 64 of high 2-bit pairs, 16 int8 scales, fp16 d; x =
// (d·scale)·(q − 32)): the 16 scales are the 16 units' groups. Each half of 128 elements reads
// 64 low and 32 high bytes; element l + 32k takes the low nibble of ql[l] (k = 0), ql[l + 32]
// (k = 1) or their high nibbles (k = 2, 3), and bits 2k, 2k + 1 of qh[l].
void q6_k_block(const std::uint8_t* b, std::uint8_t* units, CodeGroup* groups) {
  const std::uint8_t* ql = b;
  const std::uint8_t* qh = b + 128;
  const auto* sc = reinterpret_cast<const std::int8_t*>(b + 192);
  const float d = half_at(b + 208);
  for (int half = 0; half < 2; ++half, ql += 64, qh += 32, units += 128) {
    for (int l = 0; l < 32; ++l) {
      const int low[4] = {ql[l] & 0x0F, ql[l + 32] & 0x0F, ql[l] >> 4, ql[l + 32] >> 4};
      for (int k = 0; k < 4; ++k) {
        const int q = (low[k] | (((qh[l] >> (2 * k)) & 3) << 4)) - 32;
        units[l + 32 * k] = std::uint8_t(std::int8_t(q));
      }
    }
  }
  for (int g = 0; g < 16; ++g) groups[g] = {d * float(sc[g]), 0.0f};
}

using BlockConverter = void (*)(const std::uint8_t*, std::uint8_t*, CodeGroup*);

BlockConverter block_converter(TensorType type) {
  switch (type) {
    case TensorType::q8_0:
      return q8_0_block;
    case TensorType::q6_k:
      return q6_k_block;
    case TensorType::q4_0:
      return q4_0_block;
    case TensorType::q4_1:
      return q4_1_block;
    case TensorType::q4_k:
      return q4_k_block;
    case TensorType::f32:
    case TensorType::f16:
    case TensorType::bf16:
      break;
  }
  return nullptr;
}

// One row of a quantized type into its units and groups (zeroed).
void convert_quantized_row(TensorType type, const std::uint8_t* row, std::int64_t cols,
                           std::byte* units, CodeGroup* groups) {
  const TensorTypeInfo ti = info(type);
  const int units_per_block = ti.block_elements / unit_elements(device_format(type));
  const BlockConverter convert = block_converter(type);
  auto* out = reinterpret_cast<std::uint8_t*>(units);
  for (std::int64_t b = 0; b < cols / ti.block_elements; ++b) {
    const std::int64_t unit = b * units_per_block;
    convert(row + b * ti.block_bytes, out + unit * kWeightUnitBytes, groups + unit);
  }
}

}  // namespace

WeightFormat device_format(TensorType type) {
  switch (type) {
    case TensorType::f32:
      return WeightFormat::f32;
    case TensorType::f16:
      return WeightFormat::f16;
    case TensorType::bf16:
      return WeightFormat::bf16;
    case TensorType::q8_0:
    case TensorType::q6_k:
      return WeightFormat::codes8;
    case TensorType::q4_0:
    case TensorType::q4_1:
    case TensorType::q4_k:
      return WeightFormat::codes4;
  }
  throw Error("upload: weights of unknown type " + std::to_string(int(type)));
}

void convert_rows(const WeightView& w, std::int64_t first, std::int64_t count,
                  std::span<std::byte> units, std::span<CodeGroup> groups) {
  const WeightFormat f = device_format(w.type);
  const std::int64_t per_row = units_per_row(f, w.cols);
  const auto row_units = std::size_t(count * per_row);
  if (first < 0 || count < 0 || first + count > w.rows ||
      units.size() != row_units * std::size_t(kWeightUnitBytes) ||
      groups.size() != (has_groups(f) ? row_units : 0)) {
    throw Error("upload: cannot convert rows [" + std::to_string(first) + ", " +
                std::to_string(first + count) + ") of a " + std::to_string(w.rows) +
                "-row matrix into " + std::to_string(units.size()) + " bytes and " +
                std::to_string(groups.size()) + " groups");
  }
  std::fill(units.begin(), units.end(), std::byte{0});
  std::fill(groups.begin(), groups.end(), CodeGroup{0.0f, 0.0f});
  const std::size_t file_row = row_bytes(w.type, w.cols);
  const auto* file = reinterpret_cast<const std::uint8_t*>(w.data);
  for (std::int64_t r = 0; r < count; ++r) {
    const std::uint8_t* row = file + std::size_t(first + r) * file_row;
    std::byte* row_units_at = units.data() + std::size_t(r * per_row * kWeightUnitBytes);
    if (has_groups(f)) {
      convert_quantized_row(w.type, row, w.cols, row_units_at,
                            groups.data() + std::size_t(r * per_row));
    } else {
      std::memcpy(row_units_at, row, file_row);  // the same little-endian elements, then zeros
    }
  }
}

}  // namespace cocktail::gpu
