#version 450
// KvStore::append: f32 keys and values [n][n_kv_heads · head_dim] of one layer rounded to FP16
// (to nearest even, as the CPU store does) into rows [first_row, first_row + n) of every KV
// head of the layer's tail ([n_kv_heads][capacity][head_dim] halves), two halves a word.
#include "workgroup.glsl"
#include "half_round.glsl"

layout(std430, binding = 0) readonly buffer K { float k[]; };
layout(std430, binding = 1) readonly buffer V { float v[]; };
layout(std430, binding = 2) writeonly buffer TailKeys { uint tail_keys[]; };
layout(std430, binding = 3) writeonly buffer TailValues { uint tail_values[]; };
layout(push_constant) uniform Push {
  uint n_words;  // n · n_kv_heads · head_dim / 2
  uint n_kv_heads;
  uint head_dim;
  uint capacity;
  uint first_row;
  uint k_first;
  uint v_first;
} p;

void main() {
  const uint width = p.n_kv_heads * p.head_dim;
  for (uint w = gl_GlobalInvocationID.x; w < p.n_words; w += grid_stride()) {
    const uint i = 2u * w;  // an even channel: head_dim is even
    const uint token = i / width;
    const uint head = i % width / p.head_dim;
    const uint channel = i % p.head_dim;
    const uint at = ((head * p.capacity + p.first_row + token) * p.head_dim + channel) >> 1u;
    tail_keys[at] = half_bits_rn(k[p.k_first + i]) | (half_bits_rn(k[p.k_first + i + 1u]) << 16u);
    tail_values[at] = half_bits_rn(v[p.v_first + i]) | (half_bits_rn(v[p.v_first + i + 1u]) << 16u);
  }
}
