#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cocktail/kv_store.hpp"
#include "cocktail/stored_tiles.hpp"
#include "gpu_common/kv_bookkeeping.hpp"
#include "kv/store_view.hpp"
#include "runtime/gpu_buffer.hpp"
#include "runtime/gpu_device.hpp"

namespace cocktail::gpu {

// One sequence's K/V cache in a GPU's memory: an FP16 tail sized for the rest of the sequence,
// and one block of segments per commit, laid out as kv/store_view.hpp says. Commits gather,
// reorder and quantize on the device by the host's GatherTable.
//
// append enqueues one kernel on the given stream and returns. commit checks the plan on the
// host, enqueues its copies and its kernel on the given stream, then waits for that stream: it
// reports a non-finite value or one beyond FP16 as an Error (leaving the store as it was), and
// frees the previous commit's block and tail only once nothing on that stream can read them. An
// append that outgrows the tail (only without max_tokens) waits for its stream the same way
// before it frees the old tail. snapshot and clone wait for the whole device.
class GpuKvStore final : public KvStore {
 public:
  GpuKvStore(std::shared_ptr<const GpuDevice> device, const KvStoreOptions& options);

  const KvStoreOptions& options() const override { return books_.options(); }
  void append(Stream& stream, int layer, const Tensor& k, const Tensor& v) override;
  void commit(Stream& stream, const Plan& plan) override;
  std::int64_t n_tokens() const override { return books_.n_tokens(); }
  std::int64_t n_committed() const override { return books_.n_committed(); }
  const Plan& plan() const override { return books_.plan(); }
  std::size_t bytes() const override { return books_.bytes(); }
  std::vector<SegmentInfo> segments() const override { return books_.segments(); }
  KvHeadSnapshot snapshot(int layer, int kv_head) const override;
  std::shared_ptr<KvStore> clone(const KvQuantLayout& layout) const override;

  // What the attention kernels read. Valid until the next append or commit.
  StoreView view() const;
  // Tokens of `layer` (all in the tail past n_committed()); an Error for a layer not stored.
  std::int64_t layer_tokens(int layer) const { return books_.layer_tokens(layer); }
  // Changes at every commit and every append to layer 0: a decode plan made at another
  // version no longer fits the store.
  std::uint64_t version() const { return books_.version(); }

 private:
  friend const GpuKvStore& gpu_store(const char* op, const KvStore& store);

  // One commit's block: every precision's tiles of every layer × head (precision-major, then
  // heads), then each precision's tile table (first positions, then valid counts).
  struct SegmentMemory {
    std::unique_ptr<GpuBuffer> buffer;
    std::array<std::size_t, kAllPrecisions.size()> tiles_offset{};
    std::array<std::size_t, kAllPrecisions.size()> positions_offset{};
    std::array<std::size_t, kAllPrecisions.size()> valid_offset{};
    std::size_t size = 0;
  };
  // Keys, then values, of every layer × head's tail: `capacity` rows of head_dim halves each.
  struct TailMemory {
    std::unique_ptr<GpuBuffer> buffer;
    std::int64_t capacity = 0;
  };

  const KvShape& shape() const { return books_.options().shape; }
  int n_heads() const { return shape().n_layers * shape().n_kv_heads; }
  SegmentMemory allocate_segments(const TileLists& tiles) const;
  // The block's tile tables, as bytes to copy into it at the offsets allocate_segments chose.
  std::vector<std::byte> tile_tables(const TileLists& tiles, const SegmentMemory& memory) const;
  TailMemory allocate_tail(std::int64_t capacity) const;
  __half* tail_keys(const TailMemory& tail) const;
  __half* tail_values(const TailMemory& tail) const;
  // Enqueues on `stream` the copy of rows [first_row, first_row + rows) of every head of this
  // store's tail into rows [0, rows) of `to`.
  void copy_tail(cudaStream_t stream, const TailMemory& to, std::int64_t first_row,
                 std::int64_t rows) const;
  void throw_commit_fault(unsigned long long non_finite, unsigned long long beyond_half) const;
  const std::byte* head_tiles(Precision p, int head) const;

  std::shared_ptr<const GpuDevice> device_;
  KvBookkeeping books_;
  SegmentMemory segments_;
  TailMemory tail_;
  // Which plugin made it (GpuBuffer says why).
  const char* backend_ = kBackendName;
};

// `store` as a GpuKvStore of this plugin. An Error naming `op` when another backend made it.
const GpuKvStore& gpu_store(const char* op, const KvStore& store);

}  // namespace cocktail::gpu
