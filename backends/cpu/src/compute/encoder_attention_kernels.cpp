#include "compute/encoder_attention_kernels.hpp"

#include <algorithm>
#include <cmath>

// Highway compiles this file once per SIMD target: the order of these lines matters.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "compute/encoder_attention_kernels.cpp"
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

// Scores of one query against every key as a sum over dimensions of q[d] · kt[d][:], so the
// vector runs along the keys; then the softmax weights in place; returns their sum.
float SoftmaxWeights(const float* qi, const float* kt, std::int64_t length, std::int64_t width,
                     int head_dim, float scale, float* scores) {
  const DF df;
  for (std::int64_t j = 0; j < width; j += kLanes) {
    VF acc = hn::Zero(df);
    for (int d = 0; d < head_dim; ++d) {
      acc = hn::MulAdd(hn::Set(df, qi[d]), hn::LoadU(df, kt + d * width + j), acc);
    }
    hn::StoreU(hn::Mul(acc, hn::Set(df, scale)), df, scores + j);
  }
  const float max = *std::max_element(scores, scores + length);
  const VF vmax = hn::Set(df, max);
  VF sums = hn::Zero(df);
  std::int64_t j = 0;
  for (; j + kLanes <= length; j += kLanes) {
    const VF e = hn::Exp(df, hn::Sub(hn::LoadU(df, scores + j), vmax));
    hn::StoreU(e, df, scores + j);
    sums = hn::Add(sums, e);
  }
  float sum = hn::GetLane(hn::SumOfLanes(df, sums));
  for (; j < length; ++j) {
    scores[j] = std::exp(scores[j] - max);
    sum += scores[j];
  }
  return sum;
}

void EncoderAttentionHead(const float* q, const float* k, const float* v, float* out,
                          std::int64_t length, std::int64_t stride, int head_dim, float scale,
                          float* scratch) {
  const DF df;
  const std::int64_t width = encoder_attention_width(length);
  float* kt = scratch;                         // [head_dim][width]
  float* scores = scratch + head_dim * width;  // [width]
  std::fill(kt, kt + head_dim * width, 0.0f);
  for (std::int64_t j = 0; j < length; ++j) {
    for (int d = 0; d < head_dim; ++d) kt[d * width + j] = k[j * stride + d];
  }
  for (std::int64_t i = 0; i < length; ++i) {
    const float sum = SoftmaxWeights(q + i * stride, kt, length, width, head_dim, scale, scores);
    const VF inv = hn::Set(df, 1.0f / sum);
    float* oi = out + i * stride;
    int d = 0;
    for (; d + kLanes <= head_dim; d += int(kLanes)) {
      VF acc = hn::Zero(df);
      for (std::int64_t j = 0; j < length; ++j) {
        acc = hn::MulAdd(hn::Set(df, scores[j]), hn::LoadU(df, v + j * stride + d), acc);
      }
      hn::StoreU(hn::Mul(acc, inv), df, oi + d);
    }
    for (; d < head_dim; ++d) {
      float acc = 0.0f;
      for (std::int64_t j = 0; j < length; ++j) acc += scores[j] * v[j * stride + d];
      oi[d] = acc / sum;
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cocktail::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cocktail::cpu {

HWY_EXPORT(EncoderAttentionHead);

void encoder_attention_head(const float* q, const float* k, const float* v, float* out,
                            std::int64_t length, std::int64_t stride, int head_dim, float scale,
                            float* scratch) {
  HWY_DYNAMIC_DISPATCH(EncoderAttentionHead)
  (q, k, v, out, length, stride, head_dim, scale, scratch);
}

std::size_t encoder_attention_scratch(std::int64_t max_length, int head_dim) {
  return std::size_t((head_dim + 1) * encoder_attention_width(max_length));
}

}  // namespace cocktail::cpu
#endif
