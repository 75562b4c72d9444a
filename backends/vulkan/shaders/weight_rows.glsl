// Weight rows in the GPU backends' shared layout (backends/gpu_common/weight_layout.hpp),
// decoded as gpu::decode_element does (gpu_common/weight_decode.hpp): to the file's values,
// exactly. A slab's binding holds its rows' 16-byte units (rows x units_per_row, each row padded
// with zeros to a multiple of 32 elements), then, for the codes formats, one group (scale,
// offset) per unit, two to 16 bytes. Include after declaring the binding as `w` (uvec4[]).

// gpu::WeightFormat's values.
#define FORMAT_F32 0u
#define FORMAT_F16 1u
#define FORMAT_BF16 2u
#define FORMAT_CODES8 3u  // signed 8-bit codes, 16 a unit
#define FORMAT_CODES4 4u  // 4-bit codes, 32 a unit: element i and i + 16 in byte i's nibbles

uint unit_elements(uint format) {
  switch (format) {
    case FORMAT_F32:
      return 4u;
    case FORMAT_F16:
    case FORMAT_BF16:
      return 8u;
    case FORMAT_CODES8:
      return 16u;
    default:
      return 32u;
  }
}

bool has_groups(uint format) {
  return format >= FORMAT_CODES8;
}

// The scale (x) and offset (y) of unit `unit` of the slab, whose groups start at unit
// `groups_first` of the binding.
vec2 unit_group(uint groups_first, uint unit) {
  const uvec4 pair = w[groups_first + unit / 2u];
  return uintBitsToFloat((unit & 1u) == 0u ? pair.xy : pair.zw);
}

// Elements [4q, 4q + 4) of the unit `u` (q < unit_elements / 4), whose group is `group` (read
// by the codes formats only). scale · code is exact for every GGUF type (a half's 11 bits times
// a sub-block scale's 8 and a code's 6 at most), so fused or not, scale · code + offset rounds
// once, as on the host.
vec4 decode_quad(uint format, uvec4 u, vec2 group, uint q) {
  switch (format) {
    case FORMAT_F32:
      return uintBitsToFloat(u);
    case FORMAT_F16:
      return vec4(unpackHalf2x16(u[2u * q]), unpackHalf2x16(u[2u * q + 1u]));
    case FORMAT_BF16: {
      const uint a = u[2u * q], b = u[2u * q + 1u];
      return uintBitsToFloat(uvec4(a << 16, a & 0xFFFF0000u, b << 16, b & 0xFFFF0000u));
    }
    case FORMAT_CODES8: {
      const int word = int(u[q]);
      const ivec4 codes = ivec4(bitfieldExtract(word, 0, 8), bitfieldExtract(word, 8, 8),
                                bitfieldExtract(word, 16, 8), bitfieldExtract(word, 24, 8));
      return fma(vec4(group.x), vec4(codes), vec4(group.y));
    }
    default: {
      // Elements 0-15 are the low nibbles of bytes 0-15, elements 16-31 the high ones.
      const uint word = u[q % 4u] >> (4u * (q / 4u));
      const uvec4 codes = uvec4(word, word >> 8, word >> 16, word >> 24) & 0xFu;
      return fma(vec4(group.x), vec4(codes), vec4(group.y));
    }
  }
}

// Columns [col, col + 4) of row `row` of the slab (col a multiple of 4, below the padded row).
vec4 weight_quad(uint format, uint units_per_row, uint groups_first, uint row, uint col) {
  const uint per_unit = unit_elements(format);
  const uint unit = row * units_per_row + col / per_unit;
  const vec2 group = has_groups(format) ? unit_group(groups_first, unit) : vec2(0.0);
  return decode_quad(format, w[unit], group, (col % per_unit) / 4u);
}
