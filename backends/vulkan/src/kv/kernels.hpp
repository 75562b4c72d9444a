#pragma once

// The KV store's kernels (shaders/kv_*.comp) as dispatch code calls them: each one's push
// constants, laid out as its shader declares them (32-bit fields, std430), and its Kernel.

#include <cstdint>

#include "runtime/pipeline.hpp"
#include "shaders.hpp"

namespace cocktail::vulkan {

struct KvAppendPush {
  std::uint32_t n_words, n_kv_heads, head_dim, capacity, first_row, k_first, v_first;
};

// Where the rows of a kv_commit dispatch's tiles are.
enum class CommitMode : std::uint32_t { tail, copy, requantize };

struct KvCommitPush {
  std::uint32_t precision, source_precision, key_axis, value_axis, group_size, head_dim, range_fit;
  CommitMode mode;
  std::uint32_t table_first, n_table, to_tiles, from_tiles, tail_capacity, layer, n_kv_heads;
};
// kv_commit's fault record: two records (non-finite, beyond FP16) of this many words each:
// taken, head (layer · n_kv_heads + KV head), position, part, channel.
inline constexpr std::uint32_t kCommitFaultRecordWords = 8;

inline const Kernel kKvAppend{"kv_append", spirv::kv_append, 4, sizeof(KvAppendPush)};
inline const Kernel kKvCommit{"kv_commit", spirv::kv_commit, 6, sizeof(KvCommitPush)};

}  // namespace cocktail::vulkan
