#version 450
// The commit's gather-and-quantize: one workgroup per (destination tile, KV head) of one layer
// and one destination precision, for the tiles of the host's gather table whose rows come from
// one place (mode): the FP16 tail, the previous commit's tile of the same precision (copied
// whole), or its tile of FP16 or INT8 (dequantized and quantized again). Row t of a tile is its
// token min(t, valid − 1), so padding rows repeat the last token and widen no group's range.
// The destination is the new segment of (precision, layer), laid out as kv/store_view.hpp says;
// a value that is not finite, or beyond FP16, is written to the fault record (the first one
// recorded wins), which the host turns into an Error.
#include "workgroup.glsl"

layout(std430, binding = 0) coherent buffer To { uint to_words[]; };
layout(std430, binding = 1) readonly buffer From { uint from_words[]; };
layout(std430, binding = 2) readonly buffer TailKeys { uint tail_keys[]; };  // two halves a word
layout(std430, binding = 3) readonly buffer TailValues { uint tail_values[]; };
// Per destination tile: its first position, its valid rows, where its rows are (tail row or
// source tile index) and its index in the new segment.
layout(std430, binding = 4) readonly buffer Table { ivec4 table[]; };
// Two records of 8 words, non-finite then beyond FP16: taken, head, position, part, channel.
layout(std430, binding = 5) buffer Fault { uint fault[]; };
layout(push_constant) uniform Push {
  uint precision_;
  uint source_precision;
  uint key_axis;
  uint value_axis;
  uint group_size;
  uint head_dim;
  uint range_fit;
  uint mode;
  uint table_first;
  uint n_table;
  uint to_tiles;    // tiles of each head in the new segment
  uint from_tiles;  // tiles of each head in the source segment
  uint tail_capacity;
  uint layer;
  uint n_kv_heads;
} p;

#define MODE_TAIL 0u
#define MODE_COPY 1u
#define MODE_REQUANTIZE 2u

#define TILE_WORDS from_words
#include "tile_codes.glsl"
#include "half_round.glsl"

// The block being made: the head, part (0 keys, 1 values) and rows of one destination tile.
uint g_head;
uint g_part;
uint g_valid;
int g_first_position;
uint g_source;  // tail row of the tile's first token, or the source tile
BlockFormat g_from;
uint g_from_block;  // the source block's byte offset in from_words

uint row_of(uint t) {
  return min(t, g_valid - 1u);
}

float source_value(uint token, uint channel) {
  const uint r = row_of(token);
  if (p.mode != MODE_TAIL) return dequantize(g_from, g_from_block, r, channel);
  const uint at = (g_head * p.tail_capacity + g_source + r) * p.head_dim + channel;
  const uint word = g_part == 0u ? tail_keys[at >> 1u] : tail_values[at >> 1u];
  return half_from_bits((word >> ((at & 1u) * 16u)) & 0xFFFFu);
}

void record_fault(uint kind, uint token, uint channel) {
  const uint at = kind * 8u;
  if (atomicCompSwap(fault[at], 0u, 1u) != 0u) return;
  fault[at + 1u] = p.layer * p.n_kv_heads + g_head;
  fault[at + 2u] = uint(g_first_position) + row_of(token);
  fault[at + 3u] = g_part;
  fault[at + 4u] = channel;
}

#define QUANT_WORDS to_words
#include "quantize_block.glsl"

BlockFormat block_format(uint precision_, uint axis) {
  return BlockFormat(precision_, axis, p.group_size, p.head_dim, p.group_size);
}

void main() {
  const BlockFormat keys = block_format(p.precision_, p.key_axis);
  const BlockFormat values = block_format(p.precision_, p.value_axis);
  const uint tile_bytes = block_bytes(keys) + block_bytes(values);
  g_head = gl_WorkGroupID.y;
  for (uint i = gl_WorkGroupID.x; i < p.n_table; i += gl_NumWorkGroups.x) {
    const ivec4 entry = table[p.table_first + i];
    g_first_position = entry.x;
    g_valid = uint(entry.y);
    g_source = uint(entry.z);
    const uint to = (g_head * p.to_tiles + uint(entry.w)) * tile_bytes;
    if (p.mode == MODE_COPY) {
      const uint from = (g_head * p.from_tiles + g_source) * tile_bytes;
      for (uint w = gl_LocalInvocationIndex; w < tile_bytes / 4u; w += WG) {
        to_words[(to >> 2u) + w] = from_words[(from >> 2u) + w];
      }
      continue;
    }
    const BlockFormat from_keys = block_format(p.source_precision, p.key_axis);
    const BlockFormat from_values = block_format(p.source_precision, p.value_axis);
    const uint from = (g_head * p.from_tiles + g_source) *
                      (block_bytes(from_keys) + block_bytes(from_values));
    g_part = 0u;
    g_from = from_keys;
    g_from_block = from;
    quantize_block(keys, p.range_fit, to);
    g_part = 1u;
    g_from = from_values;
    g_from_block = from + block_bytes(from_keys);
    quantize_block(values, p.range_fit, to + block_bytes(keys));
  }
}
