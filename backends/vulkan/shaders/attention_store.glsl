// The store as the attention kernels read it (kv/store_view.hpp): each segment's tiles of the
// layer in their own binding (seg0 .. seg4, Precision order) with its tile table (table0 ..
// table4: an ivec2 per tile, y its tokens in use), and the layer's FP16 tail keys and values
// (tail_keys, tail_values). Codes are read in runs of 4 channels: in every layout of the tile
// format (backends/gpu_common/tile_format.hpp) channels 4r .. 4r + 3 of a row are the four
// bytes of one 32-bit word at one shift (attention/code_map.hpp of the CUDA backend), or two
// words of halves for FP16.
//
// Declare the push constant block `p` with fields head_dim and group_size first; include after
// workgroup.glsl.

layout(std430, binding = 0) readonly buffer Seg0 { uint seg0[]; };
layout(std430, binding = 1) readonly buffer Seg1 { uint seg1[]; };
layout(std430, binding = 2) readonly buffer Seg2 { uint seg2[]; };
layout(std430, binding = 3) readonly buffer Seg3 { uint seg3[]; };
layout(std430, binding = 4) readonly buffer Seg4 { uint seg4[]; };
layout(std430, binding = 5) readonly buffer Table0 { ivec2 table0[]; };
layout(std430, binding = 6) readonly buffer Table1 { ivec2 table1[]; };
layout(std430, binding = 7) readonly buffer Table2 { ivec2 table2[]; };
layout(std430, binding = 8) readonly buffer Table3 { ivec2 table3[]; };
layout(std430, binding = 9) readonly buffer Table4 { ivec2 table4[]; };
layout(std430, binding = 10) readonly buffer TailKeys { uint tail_keys[]; };
layout(std430, binding = 11) readonly buffer TailValues { uint tail_values[]; };

// tile_codes.glsl's element reads are not used here (they read one buffer); its formats are.
#define TILE_WORDS seg0
#include "tile_codes.glsl"

// Where the tail is in a walk over a layer's tiles: the sixth "segment".
#define SOURCE_TAIL 5u
#define SOURCE_TAIL_VALUES 6u

// Word `index` of a source: a segment's binding, or the tail's keys or values.
uint source_word(uint source, uint index) {
  switch (source) {
    case 0u:
      return seg0[index];
    case 1u:
      return seg1[index];
    case 2u:
      return seg2[index];
    case 3u:
      return seg3[index];
    case 4u:
      return seg4[index];
    case SOURCE_TAIL:
      return tail_keys[index];
    default:
      return tail_values[index];
  }
}

// Tokens in use of tile `tile` of a segment.
int tile_valid(uint segment, uint tile) {
  switch (segment) {
    case 0u:
      return table0[tile].y;
    case 1u:
      return table1[tile].y;
    case 2u:
      return table2[tile].y;
    case 3u:
      return table3[tile].y;
    default:
      return table4[tile].y;
  }
}

// The FP16 at byte `offset` (2-byte aligned) of a source.
float source_half(uint source, uint offset) {
  return unpackHalf2x16(source_word(source, offset >> 2u) >> ((offset & 2u) * 8u)).x;
}

// Where run `run` (channels 4·run .. 4·run + 3) of a row of `segment` is: x its byte in the
// row, y the shift of its codes in each byte (FP16: the 8 bytes at x).
uvec2 run_slot(uint segment, uint head_dim, uint run) {
  switch (segment) {
    case PRECISION_FP16:
      return uvec2(8u * run, 0u);
    case PRECISION_INT8:
      return uvec2(4u * run, 0u);
    case PRECISION_NF4:
    case PRECISION_INT4: {
      // Unit run / 8 holds 32 channels; its word r % 4 holds channels 4r.. in the low nibbles
      // (r < 4) or 4(r - 4) + 16.. in the high ones.
      const uint r = run % 8u;
      return uvec2(UNIT_BYTES * (run / 8u) + 4u * (r % 4u), 4u * (r / 4u));
    }
    default: {
      const uint full_units = head_dim / 64u;
      if (run < 16u * full_units) {
        const uint r = run % 16u;  // channels 64u + 4r + i = 64u + j + 16m
        return uvec2(UNIT_BYTES * (run / 16u) + 4u * (r % 4u), 2u * (r / 4u));
      }
      const uint c = 4u * run - 64u * full_units;  // the half unit: channels c + i = j + 8m
      return uvec2(UNIT_BYTES * full_units + 4u * ((c / 4u) % 2u), 2u * (c / 8u));
    }
  }
}

// The raw values of a run of a row starting at byte `row` of a source: FP16 values, integer
// codes, or NF4 levels.
vec4 run_codes(uint source, uint segment, uint head_dim, uint row, uint run) {
  const uvec2 slot = run_slot(segment, head_dim, run);
  const uint at = (row + slot.x) >> 2u;
  if (segment == PRECISION_FP16) {
    return vec4(unpackHalf2x16(source_word(source, at)), unpackHalf2x16(source_word(source, at + 1u)));
  }
  const uint word = source_word(source, at) >> slot.y;
  const uint mask = (1u << block_bits(BlockFormat(segment, 0u, 0u, head_dim, 1u))) - 1u;
  const uvec4 codes = uvec4(word, word >> 8u, word >> 16u, word >> 24u) & mask;
  if (segment == PRECISION_NF4) {
    return vec4(kNf4Levels[codes.x], kNf4Levels[codes.y], kNf4Levels[codes.z], kNf4Levels[codes.w]);
  }
  return vec4(codes);
}

// Dequantized run of token `token` of a block at byte `block` of segment `segment`, with
// `f` its format (the value the store holds, as tile_codes.glsl's dequantize gives it).
vec4 dequantize_run(BlockFormat f, uint block, uint token, uint run) {
  const vec4 raw = run_codes(f.precision_, f.precision_, f.head_dim, block + token * row_bytes(f), run);
  if (f.precision_ == PRECISION_FP16) return raw;
  vec4 x;
  for (uint i = 0u; i < 4u; ++i) {
    const uint g = 2u * scale_index(f, token, 4u * run + i);
    const float s = source_half(f.precision_, block + scales_offset(f) + g);
    const float z = has_zeros(f) ? source_half(f.precision_, block + zeros_offset(f) + g) : 0.0;
    if (f.precision_ == PRECISION_NF4) {
      x[i] = s * raw[i];
    } else {
      precise const float value = fma(s, raw[i], z);
      x[i] = value;
    }
  }
  return x;
}
