#version 450
// gate = silu(gate) * up, elementwise (SwiGLU).
#include "workgroup.glsl"

layout(std430, binding = 0) buffer Gate { float gate[]; };
layout(std430, binding = 1) readonly buffer Up { float up[]; };
layout(push_constant) uniform Push {
  uint n;
  uint gate_first;
  uint up_first;
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += grid_stride()) {
    const float g = gate[p.gate_first + i];
    // A very negative g makes exp(-g) infinite and the quotient -0, its limit.
    gate[p.gate_first + i] = g / (1.0 + exp(-g)) * up[p.up_first + i];
  }
}
