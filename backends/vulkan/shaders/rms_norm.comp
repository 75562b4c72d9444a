#version 450
// out[r] = x[r] / sqrt(mean(x[r]^2) + eps) * weight, one subgroup a row (subgroup.glsl). out
// may be x: each invocation writes only the elements it read, after the whole row was summed.
#include "workgroup.glsl"
#include "subgroup.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Weight { float weight[]; };
layout(std430, binding = 2) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Push {
  uint rows;
  uint cols;
  uint x_first;
  uint weight_first;
  uint out_first;
  float eps;
} p;

void main() {
  const uint lanes = subgroup_lanes();
  const uint lane = subgroup_lane();
  for (uint r = first_item(); r < p.rows; r += item_stride()) {
    const uint row = p.x_first + r * p.cols;
    float squares = 0.0;
    for (uint j = lane; j < p.cols; j += lanes) squares += x[row + j] * x[row + j];
    const float inverse = 1.0 / sqrt(subgroupAdd(squares) / float(p.cols) + p.eps);
    for (uint j = lane; j < p.cols; j += lanes) {
      out_[p.out_first + r * p.cols + j] = x[row + j] * inverse * weight[p.weight_first + j];
    }
  }
}
