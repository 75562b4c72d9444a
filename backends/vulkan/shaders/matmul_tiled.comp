#version 450
// y[t][first_row + r] = x[t] . w[r] for many tokens (prefill), on one slab of weights
// (weight_rows.glsl): each workgroup computes a tile of 64 rows x 32 tokens, staging 32 columns
// of both operands at a time in shared memory (the weights decoded to float32), so each weight
// is read from memory once per 32 tokens and each input once per 64 rows. Each invocation owns
// 4 rows x 4 tokens of the tile. The tiles need workgroup barriers, which CPU
// drivers run slowly (subgroup.glsl); the tiling is for GPUs.
#include "workgroup.glsl"

#define kTileRows 64u
#define kTileTokens 32u
#define kTileCols 32u

layout(std430, binding = 0) readonly buffer W { uvec4 w[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint n;
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

// Column-major tiles ([column][row or token]), so the inner loop reads 4 consecutive rows and
// 4 consecutive tokens; one float of padding keeps the stores of a column off one bank.
shared float w_tile[kTileCols][kTileRows + 1u];
shared float x_tile[kTileCols][kTileTokens + 1u];

// Stages columns [col0, col0 + kTileCols) of the tile's rows and tokens, zeros outside. Rows
// are padded to whole stages of 32 columns, so the weights' columns are all inside their rows.
void stage(uint row0, uint token0, uint col0) {
  // Weights: 64 rows x 8 runs of 4 columns, four runs an invocation.
  for (uint k = gl_LocalInvocationIndex; k < kTileRows * (kTileCols / 4u); k += WG) {
    const uint r = k / (kTileCols / 4u);
    const uint c = (k % (kTileCols / 4u)) * 4u;
    vec4 v = vec4(0.0);
    if (row0 + r < p.rows) {
      v = weight_quad(p.format, p.units_per_row, p.groups_first, row0 + r, col0 + c);
    }
    for (uint e = 0u; e < 4u; ++e) w_tile[c + e][r] = v[e];
  }
  // Inputs: 32 tokens x 32 columns, consecutive invocations on consecutive columns.
  for (uint k = gl_LocalInvocationIndex; k < kTileTokens * kTileCols; k += WG) {
    const uint t = k / kTileCols;
    const uint c = k % kTileCols;
    const bool inside = token0 + t < p.n && col0 + c < p.cols;
    x_tile[c][t] = inside ? x[p.x_first + (token0 + t) * p.cols + col0 + c] : 0.0;
  }
}

void main() {
  const uint row0 = gl_WorkGroupID.x * kTileRows;
  const uint token0 = gl_WorkGroupID.y * kTileTokens;
  const uint my_rows = (gl_LocalInvocationIndex / (kTileTokens / 4u)) * 4u;
  const uint my_tokens = (gl_LocalInvocationIndex % (kTileTokens / 4u)) * 4u;
  vec4 acc[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));  // [row][token]
  for (uint col0 = 0u; col0 < p.cols; col0 += kTileCols) {
    stage(row0, token0, col0);
    barrier();
    for (uint c = 0u; c < kTileCols; ++c) {
      const vec4 tokens = vec4(x_tile[c][my_tokens], x_tile[c][my_tokens + 1u],
                               x_tile[c][my_tokens + 2u], x_tile[c][my_tokens + 3u]);
      for (uint i = 0u; i < 4u; ++i) acc[i] += w_tile[c][my_rows + i] * tokens;
    }
    barrier();
  }
  for (uint i = 0u; i < 4u; ++i) {
    const uint r = row0 + my_rows + i;
    for (uint j = 0u; j < 4u; ++j) {
      const uint t = token0 + my_tokens + j;
      if (r < p.rows && t < p.n) y[p.y_first + t * p.y_cols + p.first_row + r] = acc[i][j];
    }
  }
}
