#version 450
// Reads n 16-byte words once, for Backend::measure_read_bandwidth. The words are combined and
// the result stored only when it equals `never`, a value the (zeroed) data cannot give, so no
// load can be dropped and nothing is written.
#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer Data { uvec4 data[]; };
layout(std430, binding = 1) writeonly buffer Sink { uint sink[]; };
layout(push_constant) uniform Push {
  uint n;
  uint first;
  uint never;
} p;

void main() {
  uvec4 acc = uvec4(0u);
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += grid_stride()) acc ^= data[p.first + i];
  const uint combined = acc.x ^ acc.y ^ acc.z ^ acc.w;
  if (combined == p.never) sink[0] = combined;
}
