#version 450
// Rotary position embedding in place on x[n][n_heads * head_dim]: pair i of every head of
// token t, (x[2i], x[2i+1]) or with `halves` (NeoX) (x[i], x[i + head_dim/2]), turns by
// positions[t] * frequency[i]. The frequencies come from the
// host, computed in double precision, and sine and cosine are computed here with their own
// range reduction: GLSL's sin and cos promise only an absolute error of 2^-11, and less still
// for the angles of late positions (thousands of radians).
#include "workgroup.glsl"

layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Positions { int positions[]; };
layout(std430, binding = 2) readonly buffer Frequencies { float frequency[]; };
layout(push_constant) uniform Push {
  uint pairs;      // n * n_heads * head_dim / 2
  uint half_dim;   // head_dim / 2
  uint row_pairs;  // n_heads * head_dim / 2
  uint x_first;
  uint positions_first;
  uint frequency_first;
  uint halves;  // 1: NeoX pairs, 0: adjacent pairs
} p;

// pi/2 in three parts whose products with a quadrant count below 2^13 are exact in float (the
// first part has 8 significant bits, the second 11), so theta - k * pi/2 keeps every bit of
// theta up to angles of about 12000 radians.
const float kPio2Hi = 1.5703125;
const float kPio2Mid = 4.837512969970703125e-4;
const float kPio2Lo = 7.54978995489188216e-8;

// (sin, cos) of theta: reduced to r in [-pi/4, pi/4] and quadrant k, then the minimax
// polynomials of Cephes' sinf and cosf on that interval (errors below 1e-7).
vec2 sin_cos(float theta) {
  const float k = roundEven(theta * 0.636619772367581343);
  precise float r = theta - k * kPio2Hi;
  r = r - k * kPio2Mid;
  r = r - k * kPio2Lo;
  const float z = r * r;
  const float s = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
  const float c = 1.0 - 0.5 * z +
                  z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 +
                                                       z * 2.443315711809948e-5));
  switch (int(k) & 3) {
    case 0:
      return vec2(s, c);
    case 1:
      return vec2(c, -s);
    case 2:
      return vec2(-s, -c);
    default:
      return vec2(-c, s);
  }
}

void main() {
  for (uint g = gl_GlobalInvocationID.x; g < p.pairs; g += grid_stride()) {
    const uint token = g / p.row_pairs;
    const uint i = g % p.half_dim;  // pairs of a head are consecutive
    const float theta =
        float(positions[p.positions_first + token]) * frequency[p.frequency_first + i];
    const vec2 sc = sin_cos(theta);
    const uint head = p.x_first + (g - i) * 2u;  // g - i = the head's first pair
    const uint first = head + (p.halves != 0u ? i : 2u * i);
    const uint second = first + (p.halves != 0u ? p.half_dim : 1u);
    const float x0 = x[first];
    const float x1 = x[second];
    x[first] = x0 * sc.y - x1 * sc.x;
    x[second] = x0 * sc.x + x1 * sc.y;
  }
}
