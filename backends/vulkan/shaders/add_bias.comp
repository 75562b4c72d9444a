#version 450
// x[r][c] += bias[c]: a linear layer's bias on every row.
#include "workgroup.glsl"

layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Bias { float bias[]; };
layout(push_constant) uniform Push {
  uint n;
  uint cols;
  uint x_first;
  uint bias_first;
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += grid_stride()) {
    x[p.x_first + i] += bias[p.bias_first + i % p.cols];
  }
}
