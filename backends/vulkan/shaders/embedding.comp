#version 450
// out[t][:] = row ids[t] of a table of weights (weight_rows.glsl), one workgroup per token at a
// time. The table may
// come in slabs of rows (one binding each cannot exceed maxStorageBufferRange): this run copies
// the rows of [first_row, first_row + slab_rows) and leaves the others to the runs of their
// slabs. An id outside the whole table is written to the stream's index report (the first
// one wins), which the host turns into an Error at the next synchronize.
#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer W { uvec4 w[]; };
layout(std430, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, binding = 2) writeonly buffer Out { float out_[]; };
layout(std430, binding = 3) buffer Report { uint report[]; };  // failed, position, value, limit
layout(push_constant) uniform Push {
  uint n;
  uint cols;
  uint units_per_row;  // 16-byte units a row
  uint table_rows;
  uint first_row;
  uint slab_rows;
  uint ids_first;
  uint out_first;
  uint format;        // gpu::WeightFormat
  uint groups_first;  // the unit of the binding where the slab's groups start
} p;

#include "weight_rows.glsl"

void main() {
  for (uint t = gl_WorkGroupID.x; t < p.n; t += gl_NumWorkGroups.x) {
    const int id = ids[p.ids_first + t];
    if (id < 0 || uint(id) >= p.table_rows) {
      if (gl_LocalInvocationIndex == 0u && atomicCompSwap(report[0], 0u, 1u) == 0u) {
        report[1] = t;
        report[2] = uint(id);
        report[3] = p.table_rows;
      }
      continue;
    }
    const uint row = uint(id) - p.first_row;  // wraps for rows before the slab
    if (row >= p.slab_rows) continue;
    for (uint c = 4u * gl_LocalInvocationIndex; c < p.cols; c += 4u * WG) {
      const vec4 v = weight_quad(p.format, p.units_per_row, p.groups_first, row, c);
      for (uint e = 0u; e < 4u && c + e < p.cols; ++e) {
        out_[p.out_first + t * p.cols + c + e] = v[e];
      }
    }
  }
}
