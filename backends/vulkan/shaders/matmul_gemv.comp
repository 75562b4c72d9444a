#version 450
// y[t][first_row + r] = x[t] . w[r] for the rows r of one slab of weights (weight_rows.glsl) and
// up to kTokens tokens (decode): each weight is read and decoded once and used for every token.
// One subgroup a row (subgroup.glsl), its invocations a unit at a time.
#include "workgroup.glsl"
#include "subgroup.glsl"

#define kTokens 8u

layout(std430, binding = 0) readonly buffer W { uvec4 w[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint n;              // tokens, at most kTokens
  uint cols;
  uint rows;           // of this slab
  uint units_per_row;  // 16-byte units a row
  uint x_first;
  uint y_first;
  uint y_cols;         // every row of the matrix, the width of y
  uint first_row;      // of this slab in the matrix
  uint format;         // gpu::WeightFormat
  uint groups_first;   // the unit of the binding where the slab's groups start
} p;

#include "weight_rows.glsl"

// x[t][col, col + 4) with zeros past the row's end.
vec4 load_inputs(uint t, uint col) {
  const uint at = p.x_first + t * p.cols + col;
  if (col + 4u <= p.cols) return vec4(x[at], x[at + 1u], x[at + 2u], x[at + 3u]);
  vec4 v = vec4(0.0);
  for (uint e = 0u; e < 4u; ++e) {
    if (col + e < p.cols) v[e] = x[at + e];
  }
  return v;
}

void main() {
  const uint lanes = subgroup_lanes();
  const uint lane = subgroup_lane();
  const uint per_unit = unit_elements(p.format);
  // The units that hold columns: the others are padding, zeros.
  const uint used_units = (p.cols + per_unit - 1u) / per_unit;
  for (uint row = first_item(); row < p.rows; row += item_stride()) {
    float acc[kTokens];
    for (uint t = 0u; t < kTokens; ++t) acc[t] = 0.0;
    for (uint unit = lane; unit < used_units; unit += lanes) {
      const uint at = row * p.units_per_row + unit;
      const uvec4 u = w[at];
      const vec2 group = has_groups(p.format) ? unit_group(p.groups_first, at) : vec2(0.0);
      for (uint q = 0u; q < per_unit / 4u; ++q) {
        const vec4 weights = decode_quad(p.format, u, group, q);
        // Bounded by the constant, so the compiler keeps acc in registers.
        for (uint t = 0u; t < kTokens; ++t) {
          if (t == p.n) break;
          acc[t] += dot(weights, load_inputs(t, unit * per_unit + 4u * q));
        }
      }
    }
    for (uint t = 0u; t < kTokens; ++t) {
      if (t == p.n) break;
      const float total = subgroupAdd(acc[t]);
      if (lane == 0u) y[p.y_first + t * p.y_cols + p.first_row + row] = total;
    }
  }
}
