#version 450
// The log-sum-exp merge of a decode step's partial states (docs/architecture.md, "Log-sum-exp
// merge"): per query head (a workgroup each), m = max_r m_r over the ranges that saw a token
// (l_r > 0), l = Σ_r l_r·2^(m_r - m) and out = Σ_r o_r·2^(m_r - m) / l. The partial outputs are
// unnormalised, so they need no l_r factor. An invocation per channel.
#include "workgroup.glsl"

layout(push_constant) uniform Push {
  uint n_q_heads;
  uint splits;
  uint head_dim;
  uint out_first;
} p;

// m [n_q_heads][splits], then l the same, then o [n_q_heads][splits][head_dim].
layout(std430, binding = 0) readonly buffer Partials { float partials[]; };
layout(std430, binding = 1) writeonly buffer Out { float out_[]; };

void main() {
  const uint head = gl_WorkGroupID.x;
  const uint states = p.n_q_heads * p.splits;
  const uint first = head * p.splits;
  float top = -3.0e38;
  for (uint r = 0u; r < p.splits; ++r) {
    if (partials[states + first + r] > 0.0) top = max(top, partials[first + r]);
  }
  float total = 0.0;
  for (uint r = 0u; r < p.splits; ++r) {
    const float l = partials[states + first + r];
    if (l > 0.0) total += l * exp2(partials[first + r] - top);
  }
  const float inverse = total > 0.0 ? 1.0 / total : 0.0;
  for (uint c = gl_LocalInvocationIndex; c < p.head_dim; c += WG) {
    float sum = 0.0;
    for (uint r = 0u; r < p.splits; ++r) {
      const uint state = first + r;
      if (partials[states + state] > 0.0) {
        sum += partials[2u * states + state * p.head_dim + c] * exp2(partials[state] - top);
      }
    }
    out_[p.out_first + head * p.head_dim + c] = sum * inverse;
  }
}
