#version 450
// VulkanQuantizer::pack: one block of floats [tokens][head_dim] quantized by one workgroup with
// the commit's code (quantize_block.glsl). The fault record holds the lowest site
// (token · head_dim + channel) of a value that is not finite and of one beyond FP16, each
// 0xFFFFFFFF when there is none.
#include "workgroup.glsl"

layout(std430, binding = 0) coherent buffer Packed { uint packed_words[]; };
layout(std430, binding = 1) readonly buffer Values { float values[]; };
layout(std430, binding = 2) buffer Fault { uint fault[]; };
layout(push_constant) uniform Push {
  uint precision_;
  uint axis;
  uint tokens;
  uint head_dim;
  uint group_size;
  uint range_fit;
} p;

#define TILE_WORDS packed_words
#include "tile_codes.glsl"
#include "half_round.glsl"

float source_value(uint token, uint channel) {
  return values[token * p.head_dim + channel];
}

void record_fault(uint kind, uint token, uint channel) {
  atomicMin(fault[kind], token * p.head_dim + channel);
}

#define QUANT_WORDS packed_words
#include "quantize_block.glsl"

void main() {
  quantize_block(BlockFormat(p.precision_, p.axis, p.tokens, p.head_dim, p.group_size),
                 p.range_fit, 0u);
}
