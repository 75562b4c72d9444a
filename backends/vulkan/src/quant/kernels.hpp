#pragma once

// The quantization kernels (shaders/quant_*.comp) as dispatch code calls them: each one's push
// constants, laid out as its shader declares them (32-bit fields, std430), and its Kernel.

#include <cstdint>

#include "gpu_common/tile_format.hpp"
#include "runtime/pipeline.hpp"
#include "shaders.hpp"

namespace cocktail::vulkan {

// The block format's fields as the shaders' BlockFormat takes them.
struct BlockFormatPush {
  std::uint32_t precision, axis, tokens, head_dim, group_size;
};

inline BlockFormatPush format_push(const gpu::BlockFormat& f) {
  return {std::uint32_t(f.precision), std::uint32_t(f.axis), std::uint32_t(f.tokens),
          std::uint32_t(f.head_dim), std::uint32_t(f.group_size)};
}

struct QuantPackPush {
  BlockFormatPush format;
  std::uint32_t range_fit;
};
// quant_pack's fault record: the lowest site of a non-finite value, then of one beyond FP16,
// kNoFault where none.
inline constexpr std::uint32_t kPackFaultWords = 2;
inline constexpr std::uint32_t kNoFault = 0xFFFFFFFFu;

struct QuantUnpackPush {
  BlockFormatPush format;
  std::uint32_t first_block, block_stride, n_blocks, out_first;
};

inline const Kernel kQuantPack{"quant_pack", spirv::quant_pack, 3, sizeof(QuantPackPush)};
inline const Kernel kQuantUnpack{"quant_unpack", spirv::quant_unpack, 2, sizeof(QuantUnpackPush)};

}  // namespace cocktail::vulkan
