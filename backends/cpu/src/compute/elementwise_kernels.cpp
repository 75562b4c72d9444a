#include "compute/elementwise_kernels.hpp"

#include <cmath>
#include <numbers>
#include <optional>
#include <vector>

// Highway compiles this file once per SIMD target: the order of these lines matters.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "compute/elementwise_kernels.cpp"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace cocktail::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::CappedTag<float, 16>;
using VF = hn::Vec<DF>;
constexpr std::int64_t kLanes = std::int64_t(hn::MaxLanes(DF()));

void RmsNormRows(const float* x, const float* weight, std::int64_t dim, float eps, float* out,
                 std::int64_t row_begin, std::int64_t row_end) {
  const DF df;
  for (std::int64_t r = row_begin; r < row_end; ++r) {
    const float* xr = x + r * dim;
    float* o = out + r * dim;
    VF squares = hn::Zero(df);
    std::int64_t i = 0;
    for (; i + kLanes <= dim; i += kLanes) {
      const VF v = hn::LoadU(df, xr + i);
      squares = hn::MulAdd(v, v, squares);
    }
    float sum = hn::GetLane(hn::SumOfLanes(df, squares));
    for (; i < dim; ++i) sum += xr[i] * xr[i];
    const float scale = 1.0f / std::sqrt(sum / float(dim) + eps);
    const VF vscale = hn::Set(df, scale);
    for (i = 0; i + kLanes <= dim; i += kLanes) {
      hn::StoreU(hn::Mul(hn::Mul(hn::LoadU(df, xr + i), vscale), hn::LoadU(df, weight + i)), df,
                 o + i);
    }
    for (; i < dim; ++i) o[i] = xr[i] * scale * weight[i];
  }
}

// The rotation of one position, cos and sin spread over both lanes of each pair with the sin
// negated on the even lane (x' = x · c + swap_pairs(x) · s), and the frequencies it came from.
// Kept per thread: a decode step rotates the same position in every layer, q and k alike, so
// the angles and their cos and sin are taken once a step instead of 2 · n_layers times.
struct RopeRotation {
  int head_dim = 0;
  float base = 0.0f;
  std::vector<double> inv_freq;
  std::optional<std::int32_t> position;  // the one c and s hold
  std::vector<float> angle, cos_half, sin_half, c, s;

  void prepare(int dim, float rope_base) {
    if (dim == head_dim && rope_base == base) return;
    head_dim = dim;
    base = rope_base;
    const auto pairs = std::size_t(dim / 2);
    inv_freq.resize(pairs);
    for (std::size_t i = 0; i < pairs; ++i)
      inv_freq[i] = std::pow(double(rope_base), -2.0 * double(i) / dim);
    angle.resize(pairs);
    cos_half.resize(pairs);
    sin_half.resize(pairs);
    c.resize(std::size_t(dim));
    s.resize(std::size_t(dim));
    position.reset();
  }

  void rotate_to(std::int32_t pos) {
    if (position == pos) return;
    const DF df;
    const int pairs = head_dim / 2;
    // The angle is formed and reduced to [-pi, pi] in double, so large positions keep their
    // precision; sin and cos are then taken in float.
    constexpr double kTwoPi = 2.0 * std::numbers::pi;
    for (int i = 0; i < pairs; ++i) {
      const double a = double(pos) * inv_freq[std::size_t(i)];
      angle[std::size_t(i)] = float(a - kTwoPi * std::nearbyint(a / kTwoPi));
    }
    int i = 0;
    for (; i + kLanes <= pairs; i += int(kLanes)) {
      const VF a = hn::LoadU(df, angle.data() + i);
      hn::StoreU(hn::Cos(df, a), df, cos_half.data() + i);
      hn::StoreU(hn::Sin(df, a), df, sin_half.data() + i);
    }
    for (; i < pairs; ++i) {
      cos_half[std::size_t(i)] = std::cos(angle[std::size_t(i)]);
      sin_half[std::size_t(i)] = std::sin(angle[std::size_t(i)]);
    }
    for (int p = 0; p < pairs; ++p) {
      c[std::size_t(2 * p)] = c[std::size_t(2 * p + 1)] = cos_half[std::size_t(p)];
      s[std::size_t(2 * p)] = -sin_half[std::size_t(p)];
      s[std::size_t(2 * p + 1)] = sin_half[std::size_t(p)];
    }
    position = pos;
  }
};

// One head's adjacent pairs (v[2i], v[2i+1]), with the rotation's interleaved c and s.
void RotateAdjacentPairs(float* v, int head_dim, const RopeRotation& rotation) {
  const DF df;
  const float* c = rotation.c.data();
  const float* s = rotation.s.data();
  int d = 0;
  // Reverse2 swaps the two lanes of each pair, so a vector must hold pairs (SCALAR's has one lane).
  if constexpr (kLanes >= 2) {
    for (; d + kLanes <= head_dim; d += int(kLanes)) {
      const VF xv = hn::LoadU(df, v + d);
      const VF rotated =
          hn::MulAdd(xv, hn::LoadU(df, c + d), hn::Mul(hn::Reverse2(df, xv), hn::LoadU(df, s + d)));
      hn::StoreU(rotated, df, v + d);
    }
  }
  for (; d < head_dim; d += 2) {
    const float x0 = v[d];
    const float x1 = v[d + 1];
    v[d] = x0 * c[d] + x1 * s[d];
    v[d + 1] = x1 * c[d] + x0 * s[d + 1];
  }
}

// One head's halves: pair i is (v[i], v[i + head_dim/2]), turned by cos_half[i], sin_half[i].
void RotateHalves(float* v, int head_dim, const RopeRotation& rotation) {
  const DF df;
  const int half = head_dim / 2;
  const float* c = rotation.cos_half.data();
  const float* s = rotation.sin_half.data();
  float* w = v + half;
  int i = 0;
  for (; i + kLanes <= half; i += int(kLanes)) {
    const VF lo = hn::LoadU(df, v + i);
    const VF hi = hn::LoadU(df, w + i);
    const VF cv = hn::LoadU(df, c + i);
    const VF sv = hn::LoadU(df, s + i);
    hn::StoreU(hn::NegMulAdd(hi, sv, hn::Mul(lo, cv)), df, v + i);
    hn::StoreU(hn::MulAdd(lo, sv, hn::Mul(hi, cv)), df, w + i);
  }
  for (; i < half; ++i) {
    const float lo = v[i];
    const float hi = w[i];
    v[i] = lo * c[i] - hi * s[i];
    w[i] = hi * c[i] + lo * s[i];
  }
}

void RopeTokens(float* x, const std::int32_t* positions, int n_heads, int head_dim, float base,
                RopeStyle style, std::int64_t token_begin, std::int64_t token_end) {
  thread_local RopeRotation rotation;
  rotation.prepare(head_dim, base);
  const auto rotate = style == RopeStyle::halves ? RotateHalves : RotateAdjacentPairs;
  for (std::int64_t t = token_begin; t < token_end; ++t) {
    rotation.rotate_to(positions[t]);
    for (int h = 0; h < n_heads; ++h) rotate(x + (t * n_heads + h) * head_dim, head_dim, rotation);
  }
}

void SiluMulRange(float* gate, const float* up, std::int64_t begin, std::int64_t end) {
  const DF df;
  const VF one = hn::Set(df, 1.0f);
  std::int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes) {
    const VF g = hn::LoadU(df, gate + i);
    const VF silu = hn::Div(g, hn::Add(one, hn::Exp(df, hn::Neg(g))));
    hn::StoreU(hn::Mul(silu, hn::LoadU(df, up + i)), df, gate + i);
  }
  for (; i < end; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void AddRange(float* x, const float* y, std::int64_t begin, std::int64_t end) {
  const DF df;
  std::int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes) {
    hn::StoreU(hn::Add(hn::LoadU(df, x + i), hn::LoadU(df, y + i)), df, x + i);
  }
  for (; i < end; ++i) x[i] += y[i];
}

void LayerNormRows(const float* x, const float* weight, const float* bias, std::int64_t dim,
                   float eps, float* out, std::int64_t row_begin, std::int64_t row_end) {
  const DF df;
  for (std::int64_t r = row_begin; r < row_end; ++r) {
    const float* xr = x + r * dim;
    float* o = out + r * dim;
    VF sums = hn::Zero(df);
    std::int64_t i = 0;
    for (; i + kLanes <= dim; i += kLanes) sums = hn::Add(sums, hn::LoadU(df, xr + i));
    float sum = hn::GetLane(hn::SumOfLanes(df, sums));
    for (; i < dim; ++i) sum += xr[i];
    const float mean = sum / float(dim);
    // The variance from the centred values: E[x²] - mean² would cancel when |mean| >> std.
    const VF vmean = hn::Set(df, mean);
    VF squares = hn::Zero(df);
    for (i = 0; i + kLanes <= dim; i += kLanes) {
      const VF d = hn::Sub(hn::LoadU(df, xr + i), vmean);
      squares = hn::MulAdd(d, d, squares);
    }
    float ss = hn::GetLane(hn::SumOfLanes(df, squares));
    for (; i < dim; ++i) ss += (xr[i] - mean) * (xr[i] - mean);
    const float scale = 1.0f / std::sqrt(ss / float(dim) + eps);
    const VF vscale = hn::Set(df, scale);
    for (i = 0; i + kLanes <= dim; i += kLanes) {
      const VF normed = hn::Mul(hn::Sub(hn::LoadU(df, xr + i), vmean), vscale);
      hn::StoreU(hn::MulAdd(normed, hn::LoadU(df, weight + i), hn::LoadU(df, bias + i)), df, o + i);
    }
    for (; i < dim; ++i) o[i] = (xr[i] - mean) * scale * weight[i] + bias[i];
  }
}

// erfc(z) for z >= 0 as t · exp(-z² + P(t)), t = 1 / (1 + z/2): the Chebyshev fit of Press et
// al. (Numerical Recipes, erfcc), relative error below 1.2e-7 everywhere, so the GELU of large
// negative inputs keeps its relative precision too.
template <class V>
V ErfcNonNegative(DF df, V z) {
  constexpr float kCoefficients[] = {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f,
                                     0.27886807f, -0.18628806f, 0.09678418f, 0.37409196f,
                                     1.00002368f, -1.26551223f};
  const V one = hn::Set(df, 1.0f);
  const V t = hn::Div(one, hn::MulAdd(z, hn::Set(df, 0.5f), one));
  V p = hn::Set(df, kCoefficients[0]);
  for (std::size_t k = 1; k < std::size(kCoefficients); ++k) {
    p = hn::MulAdd(p, t, hn::Set(df, kCoefficients[k]));
  }
  return hn::Mul(t, hn::Exp(df, hn::NegMulAdd(z, z, p)));
}

// gelu(x) = x · erfc(-x / √2) / 2, with erfc(-u) = 2 - erfc(u) for x > 0.
void GeluRange(float* x, std::int64_t begin, std::int64_t end) {
  const DF df;
  const VF half = hn::Set(df, 0.5f);
  const VF two = hn::Set(df, 2.0f);
  const VF inv_sqrt2 = hn::Set(df, float(1.0 / std::numbers::sqrt2));
  const auto gelu = [&](VF v) {
    const VF e = ErfcNonNegative(df, hn::Mul(hn::Abs(v), inv_sqrt2));
    const VF erfc = hn::IfThenElse(v > hn::Zero(df), hn::Sub(two, e), e);
    return hn::Mul(hn::Mul(v, half), erfc);
  };
  std::int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes) hn::StoreU(gelu(hn::LoadU(df, x + i)), df, x + i);
  for (; i < end; ++i) x[i] = 0.5f * x[i] * std::erfc(-x[i] * float(1.0 / std::numbers::sqrt2));
}

void AddBiasRows(float* x, const float* bias, std::int64_t dim, std::int64_t row_begin,
                 std::int64_t row_end) {
  for (std::int64_t r = row_begin; r < row_end; ++r) AddRange(x + r * dim, bias, 0, dim);
}

}  // namespace HWY_NAMESPACE
}  // namespace cocktail::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cocktail::cpu {

HWY_EXPORT(RmsNormRows);
HWY_EXPORT(RopeTokens);
HWY_EXPORT(SiluMulRange);
HWY_EXPORT(AddRange);
HWY_EXPORT(LayerNormRows);
HWY_EXPORT(GeluRange);
HWY_EXPORT(AddBiasRows);

void rms_norm_rows(const float* x, const float* weight, std::int64_t dim, float eps, float* out,
                   std::int64_t row_begin, std::int64_t row_end) {
  HWY_DYNAMIC_DISPATCH(RmsNormRows)(x, weight, dim, eps, out, row_begin, row_end);
}

void rope_tokens(float* x, const std::int32_t* positions, int n_heads, int head_dim, float base,
                 RopeStyle style, std::int64_t token_begin, std::int64_t token_end) {
  HWY_DYNAMIC_DISPATCH(RopeTokens)
  (x, positions, n_heads, head_dim, base, style, token_begin, token_end);
}

void silu_mul_range(float* gate, const float* up, std::int64_t begin, std::int64_t end) {
  HWY_DYNAMIC_DISPATCH(SiluMulRange)(gate, up, begin, end);
}

void add_range(float* x, const float* y, std::int64_t begin, std::int64_t end) {
  HWY_DYNAMIC_DISPATCH(AddRange)(x, y, begin, end);
}

void layer_norm_rows(const float* x, const float* weight, const float* bias, std::int64_t dim,
                     float eps, float* out, std::int64_t row_begin, std::int64_t row_end) {
  HWY_DYNAMIC_DISPATCH(LayerNormRows)(x, weight, bias, dim, eps, out, row_begin, row_end);
}

void gelu_range(float* x, std::int64_t begin, std::int64_t end) {
  HWY_DYNAMIC_DISPATCH(GeluRange)(x, begin, end);
}

void add_bias_rows(float* x, const float* bias, std::int64_t dim, std::int64_t row_begin,
                   std::int64_t row_end) {
  HWY_DYNAMIC_DISPATCH(AddBiasRows)(x, bias, dim, row_begin, row_end);
}

}  // namespace cocktail::cpu
#endif
