#pragma once

#include <hwy/aligned_allocator.h>
#include <hwy/base.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "cocktail/kv_store.hpp"
#include "quant/quantizer.hpp"
#include "tile_format.hpp"

namespace cocktail::cpu {

// Where the tokens of one tile came from, shared by every layer and head.
struct TileInfo {
  std::int64_t first_position = 0;  // original index of the tile's first token
  int valid = 0;                    // tokens in use; a chunk's last tile may be partial
};

// Tiles of one precision, in storage order.
struct SegmentIndex {
  std::vector<int> chunks;  // plan chunk indices
  std::vector<TileInfo> tiles;
};

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

class CpuKvStore final : public KvStore {
 public:
  explicit CpuKvStore(const KvStoreOptions& options);

  const KvStoreOptions& options() const override { return options_; }
  // The interface's calls run the host forms below on the CPU buffers' memory, before they
  // return.
  void append(Stream& stream, int layer, const Tensor& k, const Tensor& v) override;
  void commit(Stream& stream, const Plan& plan) override;
  void append(int layer, std::span<const float> k, std::span<const float> v,
              std::int64_t n_tokens);
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
  struct Head {
    std::array<hwy::AlignedFreeUniquePtr<std::uint8_t[]>, kAllPrecisions.size()> segment_data;
    std::vector<std::uint16_t> tail_keys;
    std::vector<std::uint16_t> tail_values;
  };
  // Where a committed chunk's tiles are; a trailing FP16 chunk shorter than a tile stays in
  // the tail instead, where it costs its exact size rather than a padded tile.
  struct ChunkLocation {
    Precision precision = Precision::fp16;
    int first_tile = 0;
    int n_tiles = 0;
    bool in_tail = false;
  };

  Head& head(int layer, int kv_head) {
    return heads_[std::size_t(layer) * std::size_t(options_.shape.n_kv_heads) +
                  std::size_t(kv_head)];
  }
  const Head& head(int layer, int kv_head) const {
    return heads_[std::size_t(layer) * std::size_t(options_.shape.n_kv_heads) +
                  std::size_t(kv_head)];
  }
  void check_commit(const Plan& plan) const;
  void build_head(int layer, int kv_head, const Plan& plan,
                  const std::array<SegmentIndex, kAllPrecisions.size()>& index,
                  const std::vector<ChunkLocation>& new_locations, std::int64_t new_committed);
  void unpack_tile(const Head& h, Precision p, int tile, std::vector<float>& keys,
                   std::vector<float>& values) const;
  void pack_tile(const float* keys, const float* values, Precision p, std::uint8_t* out) const;

  KvStoreOptions options_;
  TileFormats formats_;
  std::array<std::unique_ptr<CpuQuantizer>, kAllPrecisions.size()> key_quantizers_;
  std::array<std::unique_ptr<CpuQuantizer>, kAllPrecisions.size()> value_quantizers_;
  std::vector<Head> heads_;
  std::vector<std::int64_t> layer_tokens_;
  std::array<SegmentIndex, kAllPrecisions.size()> index_;
  std::vector<ChunkLocation> locations_;
  std::int64_t n_committed_ = 0;
  std::uint64_t commits_ = 0;
  Plan plan_;
};

}  // namespace cocktail::cpu
