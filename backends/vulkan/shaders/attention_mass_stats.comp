#version 450
// The first pass of the attention mass: workgroup (query, query head) finds the query's
// softmax maximum and sum over the keys it sees (causal; base 2, the query carries log2 e).
// Nothing is committed yet, so every key is an FP16 row of the tail.
#include "workgroup.glsl"
#include "reduce.glsl"

layout(push_constant) uniform Push {
  uint head_dim;
  uint group;
  uint n_q_heads;
  uint n_tokens;   // rows of the tail
  uint n_query;
  uint tail_capacity;
  uint q_first;
  float scale;
} p;

layout(std430, binding = 0) readonly buffer TailKeys { uint tail_keys[]; };
layout(std430, binding = 1) readonly buffer Query { float q[]; };
// [query head][query]: (m, 1 / l).
layout(std430, binding = 2) writeonly buffer Stats { vec2 stats[]; };

#define MAX_DIM 256u

shared float query[MAX_DIM];

float key_half(uint index) {
  return unpackHalf2x16(tail_keys[index >> 1u] >> ((index & 1u) * 16u)).x;
}

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint dim = p.head_dim;
  const uint k = gl_WorkGroupID.x;
  const uint head = gl_WorkGroupID.y;
  for (uint c = tid; c < dim; c += WG) {
    query[c] = q[p.q_first + (k * p.n_q_heads + head) * dim + c] * p.scale;
  }
  barrier();
  const uint seen = p.n_tokens - p.n_query + k + 1u;
  const uint keys = (head / p.group) * p.tail_capacity * dim;
  float top = -3.0e38;
  float sum = 0.0;
  for (uint t = tid; t < seen; t += WG) {
    float s = 0.0;
    for (uint c = 0u; c < dim; ++c) s += query[c] * key_half(keys + t * dim + c);
    const float m = max(top, s);
    sum = sum * exp2(top - m) + exp2(s - m);
    top = m;
  }
  const float m = workgroup_max(top);
  const float l = workgroup_sum(sum * exp2(top - m));
  if (tid == 0u) stats[head * p.n_query + k] = vec2(m, l > 0.0 ? 1.0 / l : 0.0);
}
