#include "quant/half_convert.hpp"

#include <cstddef>

#include "quant/quantizer.hpp"

// Highway compiles this file once per SIMD target: the order of these lines matters.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "quant/half_convert.cpp"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace cocktail::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Highway 1.0.3 emulates the f32 <-> f16 conversions below AVX2 (and its emulated demotion
// truncates), so only targets with F16C take the vector path.
constexpr bool kHardwareHalves = HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2;

void HalvesFromFloats(const float* in, std::size_t n, std::uint16_t* out) {
  std::size_t i = 0;
  if constexpr (kHardwareHalves) {
    const hn::ScalableTag<float> df;
    const hn::Rebind<hwy::float16_t, decltype(df)> dh;
    auto* halves = reinterpret_cast<hwy::float16_t*>(out);
    for (; i + hn::Lanes(df) <= n; i += hn::Lanes(df)) {
      hn::StoreU(hn::DemoteTo(dh, hn::LoadU(df, in + i)), dh, halves + i);
    }
  }
  for (; i < n; ++i) out[i] = f16_bits_from_f32(in[i]);
}

void FloatsFromHalves(const std::uint16_t* in, std::size_t n, float* out) {
  std::size_t i = 0;
  if constexpr (kHardwareHalves) {
    const hn::ScalableTag<float> df;
    const hn::Rebind<hwy::float16_t, decltype(df)> dh;
    const auto* halves = reinterpret_cast<const hwy::float16_t*>(in);
    for (; i + hn::Lanes(df) <= n; i += hn::Lanes(df)) {
      hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, halves + i)), df, out + i);
    }
  }
  for (; i < n; ++i) out[i] = f32_from_f16_bits(in[i]);
}

}  // namespace HWY_NAMESPACE
}  // namespace cocktail::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cocktail::cpu {

HWY_EXPORT(HalvesFromFloats);
HWY_EXPORT(FloatsFromHalves);

void halves_from_floats(std::span<const float> in, std::uint16_t* out) {
  HWY_DYNAMIC_DISPATCH(HalvesFromFloats)(in.data(), in.size(), out);
}

void floats_from_halves(std::span<const std::uint16_t> in, float* out) {
  HWY_DYNAMIC_DISPATCH(FloatsFromHalves)(in.data(), in.size(), out);
}

}  // namespace cocktail::cpu
#endif
