#pragma once

// Device reads of a converted weight matrix (gpu_common/weight_layout.hpp): one 16-byte unit and
// its group per load, and the switch from a matrix's format to a kernel's template argument.

#include <type_traits>

#include "gpu_common/weight_decode.hpp"
#include "gpu_common/weight_layout.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

template <WeightFormat F>
using FormatTag = std::integral_constant<WeightFormat, F>;

__device__ inline UnitWords load_unit(const WeightRows& w, long long row, long long unit) {
  const uint4 v = reinterpret_cast<const uint4*>(w.units)[row * w.units_per_row + unit];
  return UnitWords{{v.x, v.y, v.z, v.w}};
}

template <WeightFormat F>
__device__ inline CodeGroup load_group(const WeightRows& w, long long row, long long unit) {
  if constexpr (has_groups(F)) {
    return w.groups[row * w.units_per_row + unit];
  } else {
    return CodeGroup{0.0f, 0.0f};
  }
}

// fn(FormatTag<F>{}) for `f`: the one place a launcher turns a format into a kernel.
template <class Fn>
void with_format(WeightFormat f, Fn&& fn) {
  switch (f) {
    case WeightFormat::f32:
      return fn(FormatTag<WeightFormat::f32>{});
    case WeightFormat::f16:
      return fn(FormatTag<WeightFormat::f16>{});
    case WeightFormat::bf16:
      return fn(FormatTag<WeightFormat::bf16>{});
    case WeightFormat::codes8:
      return fn(FormatTag<WeightFormat::codes8>{});
    case WeightFormat::codes4:
      return fn(FormatTag<WeightFormat::codes4>{});
  }
}

}  // namespace cocktail::gpu
