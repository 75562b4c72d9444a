#pragma once

// The GpuQuantizer's kernels: one block of `f` packed from or unpacked to floats [tokens][head_dim]
// in device memory, on `stream`. Each launch is checked.

#include <cstddef>

#include "cocktail/quant_spec.hpp"
#include "gpu_common/tile_format.hpp"
#include "quant/quantize_fault.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

// `packed` holds f.bytes() bytes, zeroed; faults are recorded with site token · head_dim +
// channel.
void launch_pack(cudaStream_t stream, const BlockFormat& f, RangeFit fit, const float* values,
                 std::byte* packed, QuantizeFault* fault);

void launch_unpack(cudaStream_t stream, const BlockFormat& f, const std::byte* packed,
                   float* values);

}  // namespace cocktail::gpu
