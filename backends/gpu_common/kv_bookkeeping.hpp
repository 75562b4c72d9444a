#pragma once

// What a GPU backend's KV store (CUDA/HIP: GpuKvStore; Vulkan: VulkanKvStore) keeps on the host
// beside its device memory: its options and tile formats, the tokens each layer holds, the last
// commit's plan and tiles, and a version. The store runs these checks before it enqueues work,
// and records an append or a commit only once its device work is enqueued (append) or has
// succeeded (commit), so that an error leaves the record as it was.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cocktail/kv_store.hpp"
#include "cocktail/plan.hpp"
#include "cocktail/stored_tiles.hpp"
#include "cocktail/tensor.hpp"
#include "gpu_common/tile_format.hpp"

namespace cocktail::gpu {

class KvBookkeeping {
 public:
  // An Error for options no store can be made with (check_kv_store_options).
  explicit KvBookkeeping(const KvStoreOptions& options);

  const KvStoreOptions& options() const { return options_; }
  const TileFormat& format(Precision p) const { return formats_[std::size_t(p)]; }
  TileBytes tile_bytes() const;
  // The last commit's tiles of each precision.
  const TileLists& tiles() const { return tiles_; }
  std::int64_t n_tokens() const { return layer_tokens_[0]; }
  std::int64_t n_committed() const { return n_committed_; }
  const Plan& plan() const { return plan_; }
  // Tokens of `layer` (all in the tail past n_committed()); an Error for a layer not stored.
  std::int64_t layer_tokens(int layer) const;
  std::int64_t most_layer_tokens() const;
  // Changes at every commit, every append to layer 0 and every move of the tail: a decode plan
  // made at another version no longer fits the store.
  std::uint64_t version() const { return version_; }
  // The tail room for the rest of the sequence once `committed` tokens are in segments and the
  // tail holds `rows` rows: up to max_tokens, or else twice the rows (at least 256).
  std::int64_t tail_capacity(std::int64_t committed, std::int64_t rows) const;

  // KvStore::bytes, segments, and the positions of snapshot(layer, ·)'s rows.
  std::size_t bytes() const;
  std::vector<SegmentInfo> segments() const;
  std::vector<std::int64_t> positions(int layer) const;

  // An Error unless k and v are f32 rows of the shape's token_floats() that `layer` has room for
  // (check_kv_append).
  void check_append(int layer, const Tensor& k, const Tensor& v) const;
  // `rows` more tokens in `layer`'s tail.
  void appended(int layer, std::int64_t rows);
  // The tail was reallocated.
  void tail_moved() { ++version_; }
  // An Error unless `plan` may follow the last commit (check_commit).
  void check_commit(const Plan& plan) const;
  // `plan` committed: its first `n_committed` tokens are in `tiles`.
  void committed(const Plan& plan, std::int64_t n_committed, TileLists tiles);
  // The Error of a commit that found a key (part 0) or value (part 1) of layer × KV head `head`
  // at `position`, `channel` not finite, or else beyond the FP16 range (it or its group).
  [[noreturn]] void throw_commit_fault(bool non_finite, std::int64_t head, std::int64_t position,
                                       int part, std::int64_t channel) const;

  // The record of a copy of this store with `layout`: its tokens, commit and version. An Error
  // when anything is committed and `layout` is another.
  KvBookkeeping copy_with(const KvQuantLayout& layout) const;

 private:
  KvStoreOptions options_;
  std::array<TileFormat, kAllPrecisions.size()> formats_{};
  TileLists tiles_;
  std::vector<std::int64_t> layer_tokens_;
  std::int64_t n_committed_ = 0;
  std::uint64_t version_ = 0;
  Plan plan_;
};

}  // namespace cocktail::gpu
