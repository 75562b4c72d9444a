#version 450
// x += y, elementwise (residual connections).
#include "workgroup.glsl"

layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint n;
  uint x_first;
  uint y_first;
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += grid_stride()) {
    x[p.x_first + i] += y[p.y_first + i];
  }
}
