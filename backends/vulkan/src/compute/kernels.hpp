#pragma once

// The Compute kernels (shaders/*.comp) as dispatch code calls them: each one's push constants,
// laid out as its shader declares them (32-bit fields, std430), and its Kernel.

#include <cstdint>

#include "runtime/pipeline.hpp"
#include "shaders.hpp"

namespace cocktail::vulkan {

// add, silu_mul: x op= y over n elements.
struct PairPush {
  std::uint32_t n, x_first, y_first;
};
struct AddBiasPush {
  std::uint32_t n, cols, x_first, bias_first;
};
struct GeluPush {
  std::uint32_t n, x_first;
};
struct RmsNormPush {
  std::uint32_t rows, cols, x_first, weight_first, out_first;
  float eps;
};
struct LayerNormPush {
  std::uint32_t rows, cols, x_first, weight_first, bias_first, out_first;
  float eps;
};
struct RopePush {
  std::uint32_t pairs, half_dim, row_pairs, x_first, positions_first, frequency_first, halves;
};
// embedding, matmul_gemv and matmul_tiled read a slab of VulkanWeights: `format` is its
// gpu::WeightFormat (weight_rows.glsl numbers them alike), `groups_first` the 16-byte unit of
// its binding where its groups start.
struct EmbeddingPush {
  std::uint32_t n, cols, units_per_row, table_rows, first_row, slab_rows, ids_first, out_first,
      format, groups_first;
};
struct MatmulPush {
  std::uint32_t n, cols, rows, units_per_row, x_first, y_first, y_cols, first_row, format,
      groups_first;
};
struct EncoderAttentionPush {
  std::uint32_t start, tokens, head_dim, stride, q_first, k_first, v_first, out_first;
  float scale;
};
struct ReadBandwidthPush {
  std::uint32_t n, first, never;
};

// The workgroup size of every kernel (shaders/workgroup.glsl).
inline constexpr std::uint32_t kWorkgroup = 128;
// matmul_gemv: tokens it takes at most.
inline constexpr std::int64_t kGemvTokens = 8;
// matmul_tiled: rows and tokens of a workgroup's tile.
inline constexpr std::uint32_t kTileRows = 64;
inline constexpr std::uint32_t kTileTokens = 32;
// encoder_attention: the largest head it takes.
inline constexpr int kMaxEncoderHeadDim = 256;

inline const Kernel kAdd{"add", spirv::add, 2, sizeof(PairPush)};
inline const Kernel kSiluMul{"silu_mul", spirv::silu_mul, 2, sizeof(PairPush)};
inline const Kernel kAddBias{"add_bias", spirv::add_bias, 2, sizeof(AddBiasPush)};
inline const Kernel kGelu{"gelu", spirv::gelu, 1, sizeof(GeluPush)};
inline const Kernel kRmsNorm{"rms_norm", spirv::rms_norm, 3, sizeof(RmsNormPush)};
inline const Kernel kLayerNorm{"layer_norm", spirv::layer_norm, 4, sizeof(LayerNormPush)};
inline const Kernel kRope{"rope", spirv::rope, 3, sizeof(RopePush)};
inline const Kernel kEmbedding{"embedding", spirv::embedding, 4, sizeof(EmbeddingPush)};
inline const Kernel kMatmulGemv{"matmul_gemv", spirv::matmul_gemv, 3, sizeof(MatmulPush)};
inline const Kernel kMatmulTiled{"matmul_tiled", spirv::matmul_tiled, 3, sizeof(MatmulPush)};
inline const Kernel kEncoderAttention{"encoder_attention", spirv::encoder_attention, 4,
                                      sizeof(EncoderAttentionPush)};
inline const Kernel kReadBandwidth{"read_bandwidth", spirv::read_bandwidth, 2,
                                   sizeof(ReadBandwidthPush)};

}  // namespace cocktail::vulkan
