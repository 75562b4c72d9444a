#version 450
// Unmasked softmax attention inside one sequence of an encoder's batch: workgroup (i, h)
// computes the output of the sequence's token i for head h over all `tokens` tokens of the
// sequence, which start at row `start` of q, k, v and out (rows of stride = n_heads *
// head_dim floats). Keys go in chunks of WG, one an invocation, with an online softmax across
// chunks; each invocation then owns up to kDimsPerLane output dimensions. Its shared-memory
// reductions hold barriers, cheap on GPUs but slow on CPU drivers (subgroup.glsl); the
// encoder runs only for the MiniLM scorer.
#include "workgroup.glsl"
#include "reduce.glsl"

#define kMaxHeadDim 256u
#define kDimsPerLane (kMaxHeadDim / WG)
// Below every score, and finite: infinities need not survive arithmetic on every device.
#define kLowest (-3.0e38)

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Push {
  uint start;
  uint tokens;  // of the sequence
  uint head_dim;
  uint stride;
  uint q_first;
  uint k_first;
  uint v_first;
  uint out_first;
  float scale;
} p;

shared float query[kMaxHeadDim];
shared float weights[WG];  // softmax numerators of the current chunk's keys

void main() {
  const uint lane = gl_LocalInvocationIndex;
  const uint head = gl_WorkGroupID.y * p.head_dim;
  const uint token = p.start + gl_WorkGroupID.x;
  for (uint d = lane; d < p.head_dim; d += WG) query[d] = q[p.q_first + token * p.stride + head + d];
  barrier();

  float running_max = kLowest;
  float running_sum = 0.0;
  float acc[kDimsPerLane];
  for (uint e = 0u; e < kDimsPerLane; ++e) acc[e] = 0.0;
  for (uint chunk = 0u; chunk < p.tokens; chunk += WG) {
    const uint key = chunk + lane;
    float score = kLowest;
    if (key < p.tokens) {
      const uint at = p.k_first + (p.start + key) * p.stride + head;
      float dot_product = 0.0;
      for (uint d = 0u; d < p.head_dim; ++d) dot_product += query[d] * k[at + d];
      score = dot_product * p.scale;
    }
    const float new_max = max(running_max, workgroup_max(score));
    const float weight = key < p.tokens ? exp(score - new_max) : 0.0;
    const float rescale = exp(running_max - new_max);
    running_sum = running_sum * rescale + workgroup_sum(weight);
    weights[lane] = weight;
    barrier();
    const uint keys = min(WG, p.tokens - chunk);
    for (uint e = 0u; e < kDimsPerLane; ++e) {
      const uint d = lane + e * WG;
      if (d >= p.head_dim) break;
      float sum = 0.0;
      for (uint j = 0u; j < keys; ++j) {
        sum += weights[j] * v[p.v_first + (p.start + chunk + j) * p.stride + head + d];
      }
      acc[e] = acc[e] * rescale + sum;
    }
    barrier();  // every invocation is done with weights before the next chunk writes them
    running_max = new_max;
  }
  for (uint e = 0u; e < kDimsPerLane; ++e) {
    const uint d = lane + e * WG;
    if (d < p.head_dim) out_[p.out_first + token * p.stride + head + d] = acc[e] / running_sum;
  }
}
