#pragma once

#include <hwy/aligned_allocator.h>
#include <hwy/base.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "cocktail/gather_table.hpp"
#include "cocktail/kv_store.hpp"
#include "cocktail/stored_tiles.hpp"
#include "quant/quantizer.hpp"
#include "tile_format.hpp"

namespace cocktail::cpu {

// What the attention kernels read for one layer × KV head.
struct SegmentView {
  const TileFormat* format = nullptr;
  const std::uint8_t* data = nullptr;  // tiles back to back, format->bytes each
  const TileInfo* tiles = nullptr;
  int n_tiles = 0;
};

struct HeadView {
  std::vector<SegmentView> segments;           // storage order, empty ones left out
  const std::uint16_t* tail_keys = nullptr;    // [n_tail][head_dim]
  const std::uint16_t* tail_values = nullptr;  // [n_tail][head_dim]
  std::int64_t n_tail = 0;
  std::int64_t tail_first_position = 0;
};

// The CPU store's memory is two blocks, each allocated once per commit instead of once per
// segment of every layer and head: the segments of every precision, layer and head, and the
// FP16 tail of every layer and head with room for the rest of the sequence (its max_tokens;
// without one, the tail grows by doubling). An append within that room allocates nothing.
class CpuKvStore final : public KvStore {
 public:
  explicit CpuKvStore(const KvStoreOptions& options);

  const KvStoreOptions& options() const override { return options_; }
  // The interface's calls run the host forms below on the CPU buffers' memory, before they
  // return.
  void append(Stream& stream, int layer, const Tensor& k, const Tensor& v) override;
  void commit(Stream& stream, const Plan& plan) override;
  void append(int layer, std::span<const float> k, std::span<const float> v, std::int64_t n_tokens);
  // Gathers, reorders and quantizes by the plan's GatherTable (gather_table.hpp).
  void commit(const Plan& plan);
  std::int64_t n_tokens() const override { return layer_tokens_[0]; }
  std::int64_t n_committed() const override { return n_committed_; }
  const Plan& plan() const override { return plan_; }
  std::size_t bytes() const override;
  std::vector<SegmentInfo> segments() const override;
  KvHeadSnapshot snapshot(int layer, int kv_head) const override;
  std::shared_ptr<KvStore> clone(const KvQuantLayout& layout) const override;

  // The tail of `layer` holds tokens of positions [n_committed, layer_tokens(layer)).
  std::int64_t layer_tokens(int layer) const { return layer_tokens_[std::size_t(layer)]; }
  HeadView view(int layer, int kv_head) const;
  // view() into `out`, reusing its memory.
  void view_into(int layer, int kv_head, HeadView& out) const;
  // Commits so far: a decode plan made before the last one no longer fits.
  std::uint64_t commits() const { return commits_; }
  // Throws cocktail::Error when `layer` is not one of the store's layers.
  void check_layer(int layer) const;
  const TileFormats& formats() const { return formats_; }

 private:
  using Tiles = TileLists;

  // Every layer x head's tiles of each precision, back to back: precision-major, then heads.
  struct SegmentMemory {
    hwy::AlignedFreeUniquePtr<std::uint8_t[]> bytes;
    std::size_t size = 0;
    std::array<std::size_t, kAllPrecisions.size()> offset{};  // of each precision's part
  };
  // Keys and values of every layer x head's tail rows, `capacity` rows each.
  struct TailMemory {
    hwy::AlignedFreeUniquePtr<std::uint16_t[]> keys, values;
    std::int64_t capacity = 0;
  };

  int head_index(int layer, int kv_head) const {
    return layer * options_.shape.n_kv_heads + kv_head;
  }
  int n_heads() const { return options_.shape.n_layers * options_.shape.n_kv_heads; }
  // The first byte of a head's tiles of precision p, in `memory` laid out for `tiles`.
  std::uint8_t* segment_data(const SegmentMemory& memory, const Tiles& tiles, Precision p,
                             int head) const;
  std::size_t tail_offset(const TailMemory& tail, int head) const;
  SegmentMemory allocate_segments(const Tiles& tiles) const;
  TailMemory allocate_tail(std::int64_t capacity) const;
  // A tail of `capacity` rows holding this one's rows from `first_row` on.
  TailMemory moved_tail(std::int64_t first_row, std::int64_t capacity) const;
  // The tail room for the rest of the sequence once `committed` tokens are in segments.
  std::int64_t tail_capacity(std::int64_t committed, std::int64_t rows) const;
  TileBytes tile_bytes() const;
  void gather_head(int head, const GatherTable& table, const Tiles& tiles,
                   const SegmentMemory& into) const;
  void unpack_tile(const std::uint8_t* tile, Precision p, std::vector<float>& keys,
                   std::vector<float>& values) const;
  void pack_tile(const float* keys, const float* values, Precision p, std::uint8_t* out) const;

  KvStoreOptions options_;
  TileFormats formats_;
  std::array<std::unique_ptr<CpuQuantizer>, kAllPrecisions.size()> key_quantizers_;
  std::array<std::unique_ptr<CpuQuantizer>, kAllPrecisions.size()> value_quantizers_;
  Tiles tiles_;
  SegmentMemory segments_;
  TailMemory tail_;
  std::vector<std::int64_t> layer_tokens_;
  std::int64_t n_committed_ = 0;
  std::uint64_t commits_ = 0;
  Plan plan_;
};

}  // namespace cocktail::cpu
