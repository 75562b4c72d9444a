#pragma once

// How the GPU backends (CUDA and HIP: GpuCompute; Vulkan: VulkanCompute) keep a weight matrix on
// the device, and the host code that converts a file's rows to it. Plain C++ (no GPU names), so
// the conversion is tested on any machine; gpu_common/weight_decode.hpp decodes a unit, on the
// device and in those tests, and backends/vulkan/shaders/weight_rows.glsl in GLSL.
//
// Every format holds the file's values exactly: the matmuls must give what the file's weights
// give in float32 arithmetic, within float32 rounding (the Llama conformance test compares
// logits at 1e-4, which rounding the weights to FP16 would miss by an order of magnitude).
// f32, f16 and bf16 rows are kept as they are; quantized rows become integer codes with a
// float32 scale and offset per group, w = scale · code + offset, which every GGUF block type
// decodes to exactly (Q4_K's and Q6_K's sub-block scales folded into the group's scale).
//
// A row is a whole number of 16-byte units, one load of a kernel: 4 f32, 8 f16 or bf16, 16
// 8-bit codes or 32 4-bit codes; a code unit is one group. Rows are padded with zeros to a
// multiple of kColumnQuantum elements, so that units never straddle the end of a row and a GEMM
// tile of kColumnQuantum columns is whole.

#include <cstddef>
#include <cstdint>
#include <span>

#include "cocktail/compute.hpp"
#include "cocktail/tensor_type.hpp"
#include "gpu_common/host_device.hpp"

namespace cocktail::gpu {

// The values are part of the layout: the Vulkan shaders take them as numbers (weight_rows.glsl).
enum class WeightFormat : unsigned char {
  f32 = 0,
  f16 = 1,
  bf16 = 2,
  codes8 = 3,  // Q8_0 and Q6_K: signed 8-bit codes, 16 to a group
  codes4 = 4,  // Q4_0, Q4_1 and Q4_K: 4-bit codes (0-15), 32 to a group, elements i and i + 16
               // in the low and high nibble of byte i (Q4_0's own order: its blocks copy as
               // they are)
};

inline constexpr std::int64_t kWeightUnitBytes = 16;
inline constexpr std::int64_t kColumnQuantum = 32;

// The scale and offset of one unit of codes.
struct alignas(8) CodeGroup {
  float scale;
  float offset;
};

WeightFormat device_format(TensorType type);

// Elements in one 16-byte unit of `f`.
COCKTAIL_HOST_DEVICE constexpr int unit_elements(WeightFormat f) {
  switch (f) {
    case WeightFormat::f32:
      return 4;
    case WeightFormat::f16:
    case WeightFormat::bf16:
      return 8;
    case WeightFormat::codes8:
      return 16;
    case WeightFormat::codes4:
      return 32;
  }
  return 1;
}

COCKTAIL_HOST_DEVICE constexpr bool has_groups(WeightFormat f) {
  return f == WeightFormat::codes8 || f == WeightFormat::codes4;
}

// cols rounded up to kColumnQuantum.
COCKTAIL_HOST_DEVICE constexpr std::int64_t padded_cols(std::int64_t cols) {
  return (cols + kColumnQuantum - 1) / kColumnQuantum * kColumnQuantum;
}

COCKTAIL_HOST_DEVICE constexpr std::int64_t units_per_row(WeightFormat f, std::int64_t cols) {
  return padded_cols(cols) / unit_elements(f);
}

// A converted matrix in device memory, as the kernels read it.
struct WeightRows {
  WeightFormat format = WeightFormat::f32;
  const std::byte* units = nullptr;   // rows · units_per_row units
  const CodeGroup* groups = nullptr;  // one per unit; codes formats only
  std::int64_t rows = 0;
  std::int64_t cols = 0;  // of the file; the units hold padded_cols(cols)
  std::int64_t units_per_row = 0;
};

// Converts rows [first, first + count) of `w` to `f` (device_format(w.type)): `units` receives
// count · units_per_row 16-byte units, `groups` (codes formats only; empty otherwise) one group
// per unit. Padding is zero: zero codes, scales and offsets.
void convert_rows(const WeightView& w, std::int64_t first, std::int64_t count,
                  std::span<std::byte> units, std::span<CodeGroup> groups);

}  // namespace cocktail::gpu
