#version 450
// out[r] = (x[r] - mean) / sqrt(var + eps) * weight + bias with the biased variance (BERT's
// LayerNorm), one subgroup a row (subgroup.glsl). The variance is the mean of squared
// deviations from the mean, not E[x^2] - mean^2, which loses it on rows far from zero. out may
// be x.
#include "workgroup.glsl"
#include "subgroup.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Weight { float weight[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Push {
  uint rows;
  uint cols;
  uint x_first;
  uint weight_first;
  uint bias_first;
  uint out_first;
  float eps;
} p;

void main() {
  const uint lanes = subgroup_lanes();
  const uint lane = subgroup_lane();
  for (uint r = first_item(); r < p.rows; r += item_stride()) {
    const uint row = p.x_first + r * p.cols;
    float sum = 0.0;
    for (uint j = lane; j < p.cols; j += lanes) sum += x[row + j];
    const float mean = subgroupAdd(sum) / float(p.cols);
    float deviations = 0.0;
    for (uint j = lane; j < p.cols; j += lanes) deviations += (x[row + j] - mean) * (x[row + j] - mean);
    const float inverse = 1.0 / sqrt(subgroupAdd(deviations) / float(p.cols) + p.eps);
    for (uint j = lane; j < p.cols; j += lanes) {
      out_[p.out_first + r * p.cols + j] =
          (x[row + j] - mean) * inverse * weight[p.weight_first + j] + bias[p.bias_first + j];
    }
  }
}
