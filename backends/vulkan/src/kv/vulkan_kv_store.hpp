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
#include "memory/vulkan_buffer.hpp"
#include "memory/vulkan_stream.hpp"
#include "runtime/device.hpp"

namespace cocktail::vulkan {

// One sequence's K/V cache in a Vulkan device's memory: an FP16 tail sized for the rest of the
// sequence, and each commit's segments, laid out as kv/store_view.hpp says. Commits gather,
// reorder and quantize on the device by the host's GatherTable.
//
// append enqueues one kernel on the given stream. commit checks the plan on the host, enqueues
// its kernels and copies on the given stream, then synchronizes that stream: it reports a
// non-finite value or one beyond FP16 as an Error (leaving the store as it was), and frees the
// previous commit's segments and tail only then. An append that outgrows the tail (only without
// max_tokens) synchronizes its stream the same way before it frees the old tail. snapshot and
// clone run on a stream of the store's own: they see the work of streams already synchronized.
class VulkanKvStore final : public KvStore {
 public:
  VulkanKvStore(std::shared_ptr<const Device> device, const KvStoreOptions& options);
  ~VulkanKvStore() override;
  VulkanKvStore(const VulkanKvStore&) = delete;
  VulkanKvStore& operator=(const VulkanKvStore&) = delete;

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

  const Device& device() const { return *device_; }
  // What the attention kernels read. Valid until the next append or commit.
  StoreView view() const;
  // Tokens of `layer` (all in the tail past n_committed()); an Error for a layer not stored.
  std::int64_t layer_tokens(int layer) const { return books_.layer_tokens(layer); }
  // Changes at every commit and every append to layer 0: a decode plan made at another
  // version no longer fits the store.
  std::uint64_t version() const { return books_.version(); }

 private:
  using Memory = std::unique_ptr<VulkanBuffer>;
  // One commit's memory: each precision's tiles of each layer ([precision][layer]; none for a
  // precision without tiles) and each precision's tile table (ivec2 per tile).
  struct Segments {
    std::array<std::vector<Memory>, kAllPrecisions.size()> layers;
    std::array<Memory, kAllPrecisions.size()> tables;
  };
  // Each layer's keys and values: [n_kv_heads][capacity][head_dim] halves; none while capacity
  // is 0.
  struct Tail {
    std::vector<Memory> keys;
    std::vector<Memory> values;
    std::int64_t capacity = 0;
  };

  const KvShape& shape() const { return books_.options().shape; }
  // Memory for the segments `tiles` describe, their tables not yet written. An Error naming
  // `op` when a layer's tiles of one precision exceed one storage binding.
  Segments allocate_segments(const char* op, const TileLists& tiles) const;
  Tail allocate_tail(const char* op, std::int64_t capacity) const;
  // Enqueues the copy of rows [first_row, first_row + rows) of every layer × head of `from`
  // into rows [0, rows) of `to`.
  void copy_tail(VulkanStream& stream, const Tail& from, const Tail& to, std::int64_t first_row,
                 std::int64_t rows) const;
  // The range of `memory`, or the placeholder where there is none.
  BufferRange bound(const Memory& memory) const;
  // Enqueues the commit's gather-and-quantize kernels, by `table`, into `to`; returns the
  // memory of the table they read, to keep until the stream is synchronized.
  Memory enqueue_gather(VulkanStream& stream, const GatherTable& table, const Segments& to,
                        const VulkanBuffer& fault) const;
  void throw_commit_fault(std::span<const std::uint32_t> fault) const;
  // Part `part` (0 keys, 1 values) of every tile of `p` of (layer, kv_head), dequantized on the
  // device by `stream` (which it synchronizes): floats [tiles][group_size][head_dim].
  std::vector<float> decode_tiles(VulkanStream& stream, Precision p, int layer, int kv_head,
                                  int part) const;
  VulkanStream& own_stream() const;

  std::shared_ptr<const Device> device_;
  gpu::KvBookkeeping books_;
  Segments segments_;
  Tail tail_;
  // Bound where a kernel's operand has no memory (a precision without tiles, no tail yet).
  Memory placeholder_;
  mutable std::unique_ptr<VulkanStream> own_stream_;
};

}  // namespace cocktail::vulkan
