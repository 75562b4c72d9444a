#version 450
// Dequantizes n_blocks blocks of one format, block_stride bytes apart from byte first_block,
// into floats [n_blocks][tokens][head_dim] from out_first: VulkanQuantizer::unpack (one block)
// and the store's snapshot (a head's tiles, keys or values), both through tile_codes.glsl.
#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer Packed { uint packed_words[]; };
layout(std430, binding = 1) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Push {
  uint precision_;
  uint axis;
  uint tokens;
  uint head_dim;
  uint group_size;
  uint first_block;
  uint block_stride;
  uint n_blocks;
  uint out_first;
} p;

#define TILE_WORDS packed_words
#include "tile_codes.glsl"

void main() {
  const BlockFormat f = BlockFormat(p.precision_, p.axis, p.tokens, p.head_dim, p.group_size);
  const uint per_block = p.tokens * p.head_dim;
  const uint n = p.n_blocks * per_block;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += grid_stride()) {
    const uint b = i / per_block;
    const uint in_block = i % per_block;
    out_[p.out_first + i] = dequantize(f, p.first_block + b * p.block_stride,
                                       in_block / p.head_dim, in_block % p.head_dim);
  }
}
