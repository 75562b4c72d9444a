#pragma once

// The block format the GPU backends' quantizers (CUDA/HIP: GpuQuantizer; Vulkan:
// VulkanQuantizer) pack a block in, checked as both check it.

#include <string_view>

#include "cocktail/quant_spec.hpp"
#include "cocktail/quantizer.hpp"
#include "gpu_common/tile_format.hpp"

namespace cocktail::gpu {

// The block format of `shape` under `spec`. An Error worded as quantizer_call says for a negative
// size, or for a bit-packed precision (NF4, INT4, INT2) whose rows are not whole planar units
// (channels not a multiple of 32).
BlockFormat quantizer_format(std::string_view quantizer, std::string_view call,
                             const QuantSpec& spec, const BlockShape& shape);

}  // namespace cocktail::gpu
