#version 450
// x = x * Phi(x) = x * erfc(-x / sqrt(2)) / 2, elementwise: GELU in its exact (erf) form.
#include "workgroup.glsl"

layout(std430, binding = 0) buffer X { float x[]; };
layout(push_constant) uniform Push {
  uint n;
  uint x_first;
} p;

// erfc(z) with a relative error below 1.2e-7 for every z (the Chebyshev fit of Numerical
// Recipes' erfcc). GLSL has no erf, and 1 - erf(z) would lose every digit in the far negative
// tail of GELU, where x * Phi(x) is tiny but must keep its relative precision.
float erfc_of(float z) {
  const float a = abs(z);
  const float t = 1.0 / (1.0 + 0.5 * a);
  const float fit =
      -1.26551223 +
      t * (1.00002368 +
           t * (0.37409196 +
                t * (0.09678418 +
                     t * (-0.18628806 +
                          t * (0.27886807 +
                               t * (-1.13520398 +
                                    t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const float r = t * exp(fit - a * a);
  return z >= 0.0 ? r : 2.0 - r;
}

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += grid_stride()) {
    const float v = x[p.x_first + i];
    x[p.x_first + i] = 0.5 * v * erfc_of(-v * 0.70710678118654752);
  }
}
