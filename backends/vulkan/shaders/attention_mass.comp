#version 450
// The second pass of the attention mass: invocation (key, query head) sums the softmax weights
// 2^(s - m) / l of the queries that see the key, with the maxima and sums of the first pass
// (attention_mass_stats.comp), into mass[head][key].
#include "workgroup.glsl"

layout(push_constant) uniform Push {
  uint head_dim;
  uint group;
  uint n_q_heads;
  uint n_tokens;
  uint n_query;
  uint tail_capacity;
  uint q_first;
  float scale;
  uint mass_first;
} p;

layout(std430, binding = 0) readonly buffer TailKeys { uint tail_keys[]; };
layout(std430, binding = 1) readonly buffer Query { float q[]; };
layout(std430, binding = 2) readonly buffer Stats { vec2 stats[]; };
layout(std430, binding = 3) writeonly buffer Mass { float mass[]; };

float key_half(uint index) {
  return unpackHalf2x16(tail_keys[index >> 1u] >> ((index & 1u) * 16u)).x;
}

void main() {
  const uint t = gl_GlobalInvocationID.x;
  const uint head = gl_WorkGroupID.y;
  if (t >= p.n_tokens) return;
  const uint dim = p.head_dim;
  const uint key = ((head / p.group) * p.tail_capacity + t) * dim;
  const uint earlier = p.n_tokens - p.n_query;
  float total = 0.0;
  // Query k sits at position earlier + k and sees the keys up to it.
  for (uint k = t < earlier ? 0u : t - earlier; k < p.n_query; ++k) {
    const uint row = p.q_first + (k * p.n_q_heads + head) * dim;
    float s = 0.0;
    for (uint c = 0u; c < dim; ++c) s += q[row + c] * key_half(key + c);
    const vec2 ml = stats[head * p.n_query + k];
    total += exp2(s * p.scale - ml.x) * ml.y;
  }
  mass[p.mass_first + head * p.n_tokens + t] = total;
}
