#pragma once

// The attention kernels (shaders/attention_*.comp) as dispatch code calls them: each one's push
// constants, laid out as its shader declares them (32-bit fields, std430), and its Kernel.

#include <cstdint>

#include "runtime/pipeline.hpp"
#include "shaders.hpp"

namespace cocktail::vulkan {

// The bindings every store-reading kernel starts with (shaders/attention_store.glsl): each
// precision's segment of the layer, each precision's tile table, the tail keys and values.
inline constexpr std::uint32_t kStoreBindings = 12;

struct AttentionDecodePush {
  std::uint32_t head_dim, group_size, key_axis, value_axis, group, batch_heads, batches, tiles,
      splits, tail_rows, tail_capacity, q_first, n_q_heads;
  float scale;
  std::uint32_t n_tiles[5];
};
struct AttentionMergePush {
  std::uint32_t n_q_heads, splits, head_dim, out_first;
};
struct AttentionPrefillPush {
  std::uint32_t head_dim, group_size, key_axis, value_axis, group, n_q_heads, n_new, tail_rows,
      tail_capacity, chunk, q_first, out_first;
  float scale;
  std::uint32_t n_tiles[5];
};
// attention_mass_stats and attention_mass (which reads mass_first too).
struct AttentionMassPush {
  std::uint32_t head_dim, group, n_q_heads, n_tokens, n_query, tail_capacity, q_first;
  float scale;
  std::uint32_t mass_first;
};

// Query heads one decode workgroup serves at most, the largest head_dim, the query rows of a
// prefill workgroup and the floats of its key (and value) chunk (the shaders' MAX_HEADS,
// MAX_DIM, ROWS, KV_FLOATS).
inline constexpr int kDecodeMaxHeads = 8;
inline constexpr int kAttentionMaxDim = 256;
inline constexpr std::int64_t kPrefillRows = 8;
inline constexpr int kPrefillChunkFloats = 2048;
inline constexpr int kPrefillMaxChunk = 32;

inline const Kernel kAttentionDecode{"attention_decode", spirv::attention_decode,
                                     kStoreBindings + 2, sizeof(AttentionDecodePush)};
inline const Kernel kAttentionMerge{"attention_merge", spirv::attention_merge, 2,
                                    sizeof(AttentionMergePush)};
inline const Kernel kAttentionPrefill{"attention_prefill", spirv::attention_prefill,
                                      kStoreBindings + 2, sizeof(AttentionPrefillPush)};
inline const Kernel kAttentionMassStats{"attention_mass_stats", spirv::attention_mass_stats, 3,
                                        sizeof(AttentionMassPush) - sizeof(std::uint32_t)};
inline const Kernel kAttentionMass{"attention_mass", spirv::attention_mass, 4,
                                   sizeof(AttentionMassPush)};

}  // namespace cocktail::vulkan
