#include "kv/vulkan_kv_store.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "cocktail/dequantize.hpp"
#include "cocktail/error.hpp"
#include "cocktail/gather_table.hpp"
#include "cocktail/kv_store_checks.hpp"
#include "compute/kernels.hpp"
#include "kv/kernels.hpp"
#include "quant/kernels.hpp"

namespace cocktail::vulkan {

namespace {

// The placeholder's bytes: one binding's worth for any device's offset alignment.
constexpr std::size_t kPlaceholderBytes = 256;
constexpr std::size_t kHalf = 2;

std::size_t index_of(Precision p) {
  return std::size_t(p);
}

std::uint32_t u32(std::int64_t n) {
  return std::uint32_t(n);
}

BufferRange whole(const VulkanBuffer& memory) {
  return {memory.allocation().buffer, memory.allocation().offset, memory.size()};
}

// A tensor over all of `memory` as 32-bit words (every part of the store is whole words), for
// the stream's copies.
Tensor words_of(VulkanBuffer& memory) {
  return {&memory, 0, ElementType::i32, std::int64_t(memory.size() / 4), 1};
}

template <class Push>
void run(VulkanStream& stream, const Kernel& kernel, std::initializer_list<BufferRange> buffers,
         const Push& push, std::array<std::uint32_t, 2> groups) {
  stream.dispatch(kernel, std::span(buffers.begin(), buffers.size()),
                  std::as_bytes(std::span(&push, 1)), groups);
}

// An Error naming `op` when `what` needs more bytes than one storage binding of `device`.
void expect_binding(const char* op, const std::string& what, std::size_t bytes,
                    const Device& device) {
  if (bytes <= device.limits().max_storage_range) return;
  throw Error(std::string(op) + ": " + what + " needs " + std::to_string(bytes) +
              " bytes, more than one storage binding of " + device.name() +
              " covers (maxStorageBufferRange, " +
              std::to_string(device.limits().max_storage_range) + ")");
}

}  // namespace

VulkanKvStore::VulkanKvStore(std::shared_ptr<const Device> device, const KvStoreOptions& options)
    : device_(std::move(device)),
      books_(options),
      placeholder_(std::make_unique<VulkanBuffer>(device_, kPlaceholderBytes)) {}

VulkanKvStore::~VulkanKvStore() = default;

BufferRange VulkanKvStore::bound(const Memory& memory) const {
  return whole(memory ? *memory : *placeholder_);
}

VulkanStream& VulkanKvStore::own_stream() const {
  if (!own_stream_) own_stream_ = std::make_unique<VulkanStream>(device_);
  return *own_stream_;
}

VulkanKvStore::Tail VulkanKvStore::allocate_tail(const char* op, std::int64_t capacity) const {
  Tail tail;
  tail.capacity = capacity;
  if (capacity == 0) return tail;
  const std::size_t bytes = std::size_t(shape().n_kv_heads) * std::size_t(capacity) *
                            std::size_t(shape().head_dim) * kHalf;
  expect_binding(op, "the FP16 tail of a layer for " + std::to_string(capacity) + " tokens", bytes,
                 *device_);
  for (int layer = 0; layer < shape().n_layers; ++layer) {
    tail.keys.push_back(std::make_unique<VulkanBuffer>(device_, bytes));
    tail.values.push_back(std::make_unique<VulkanBuffer>(device_, bytes));
  }
  return tail;
}

void VulkanKvStore::copy_tail(VulkanStream& stream, const Tail& from, const Tail& to,
                              std::int64_t first_row, std::int64_t rows) const {
  if (rows <= 0) return;
  const auto d = std::size_t(shape().head_dim);
  for (int layer = 0; layer < shape().n_layers; ++layer) {
    const auto l = std::size_t(layer);
    for (int h = 0; h < shape().n_kv_heads; ++h) {
      const std::size_t from_offset =
          (std::size_t(h) * std::size_t(from.capacity) + std::size_t(first_row)) * d * kHalf;
      const std::size_t to_offset = std::size_t(h) * std::size_t(to.capacity) * d * kHalf;
      for (const auto part : {&Tail::keys, &Tail::values}) {
        stream.copy({(from.*part)[l].get(), from_offset, ElementType::f16, rows, std::int64_t(d)},
                    {(to.*part)[l].get(), to_offset, ElementType::f16, rows, std::int64_t(d)});
      }
    }
  }
}

void VulkanKvStore::append(Stream& s, int layer, const Tensor& k, const Tensor& v) {
  constexpr const char* kOp = "KV store: append";
  books_.check_append(layer, k, v);
  VulkanStream& stream = vulkan_stream(kOp, s, *device_);
  const KernelOperand keys = kernel_operand(kOp, "k", k, *device_);
  const KernelOperand values = kernel_operand(kOp, "v", v, *device_);
  const std::int64_t committed = books_.n_committed();
  const std::int64_t rows = books_.layer_tokens(layer) - committed;
  if (rows + k.rows > tail_.capacity) {
    const std::int64_t held = books_.most_layer_tokens() - committed;
    Tail grown = allocate_tail(kOp, books_.tail_capacity(committed, held + k.rows));
    copy_tail(stream, tail_, grown, 0, held);
    // Kernels already on the stream may still read the old tail.
    if (tail_.capacity > 0) stream.synchronize();
    tail_ = std::move(grown);
    books_.tail_moved();
  }
  if (k.rows > 0) {
    const auto l = std::size_t(layer);
    const std::int64_t n_words = k.elements() / 2;
    const KvAppendPush push{u32(n_words),
                            u32(shape().n_kv_heads),
                            u32(shape().head_dim),
                            u32(tail_.capacity),
                            u32(rows),
                            keys.first,
                            values.first};
    const std::int64_t groups = (n_words + kWorkgroup - 1) / kWorkgroup;
    run(stream, kKvAppend,
        {keys.binding, values.binding, whole(*tail_.keys[l]), whole(*tail_.values[l])}, push,
        {u32(std::min<std::int64_t>(groups, device_->limits().max_groups)), 1});
  }
  books_.appended(layer, k.rows);
}

VulkanKvStore::Segments VulkanKvStore::allocate_segments(const char* op,
                                                         const TileLists& tiles) const {
  Segments segments;
  const TileBytes bytes = books_.tile_bytes();
  for (Precision p : kAllPrecisions) {
    const std::size_t n = tiles[index_of(p)].size();
    if (n == 0) continue;
    const std::size_t layer_bytes = n * bytes[index_of(p)] * std::size_t(shape().n_kv_heads);
    expect_binding(op,
                   "a layer's " + std::to_string(n) + " " + std::string(to_string(p)) +
                       " tiles of " + std::to_string(shape().n_kv_heads) + " KV heads",
                   layer_bytes, *device_);
    for (int layer = 0; layer < shape().n_layers; ++layer) {
      segments.layers[index_of(p)].push_back(std::make_unique<VulkanBuffer>(device_, layer_bytes));
    }
    segments.tables[index_of(p)] =
        std::make_unique<VulkanBuffer>(device_, n * 2 * sizeof(std::int32_t));
  }
  return segments;
}

VulkanKvStore::Memory VulkanKvStore::enqueue_gather(VulkanStream& stream, const GatherTable& table,
                                                    const Segments& to,
                                                    const VulkanBuffer& fault) const {
  // The table's tiles grouped by destination precision and by where their rows are, one
  // dispatch per group and layer: ivec4 (first position, valid, source, index) each.
  struct Run {
    Precision precision;
    CommitMode mode;
    Precision source;
    std::uint32_t first;
    std::uint32_t count;
  };
  std::vector<std::int32_t> entries;
  std::vector<Run> runs;
  for (Precision p : kAllPrecisions) {
    const std::vector<GatherTile>& segment = table.segment(p);
    for (const CommitMode mode : {CommitMode::tail, CommitMode::copy, CommitMode::requantize}) {
      for (Precision source : kAllPrecisions) {
        const auto first = std::uint32_t(entries.size() / 4);
        for (std::size_t i = 0; i < segment.size(); ++i) {
          const GatherSource& from = segment[i].source;
          const CommitMode its = from.place == GatherSource::Place::tail ? CommitMode::tail
                                 : from.precision == p                   ? CommitMode::copy
                                                                         : CommitMode::requantize;
          if (its != mode || (mode == CommitMode::requantize && from.precision != source)) continue;
          entries.insert(entries.end(), {std::int32_t(segment[i].first_position), segment[i].valid,
                                         std::int32_t(from.index), std::int32_t(i)});
        }
        const auto count = std::uint32_t(entries.size() / 4) - first;
        if (count > 0) runs.push_back({p, mode, source, first, count});
        // Tail and copy runs do not depend on a source precision.
        if (mode != CommitMode::requantize) break;
      }
    }
  }
  if (entries.empty()) return nullptr;
  auto gather = std::make_unique<VulkanBuffer>(device_, entries.size() * sizeof(std::int32_t));
  stream.upload(std::as_bytes(std::span(entries)), words_of(*gather));
  const KvQuantLayout& layout = books_.options().layout;
  for (const Run& r : runs) {
    const auto p = index_of(r.precision);
    const auto source = index_of(r.mode == CommitMode::copy ? r.precision : r.source);
    for (int layer = 0; layer < shape().n_layers; ++layer) {
      const auto l = std::size_t(layer);
      const bool from_segment = r.mode != CommitMode::tail;
      const KvCommitPush push{std::uint32_t(r.precision),
                              std::uint32_t(source),
                              std::uint32_t(layout.key_axis),
                              std::uint32_t(layout.value_axis),
                              u32(layout.group_size),
                              u32(shape().head_dim),
                              std::uint32_t(layout.range),
                              r.mode,
                              r.first,
                              r.count,
                              u32(std::int64_t(table.segment(r.precision).size())),
                              u32(std::int64_t(books_.tiles()[source].size())),
                              u32(tail_.capacity),
                              u32(layer),
                              u32(shape().n_kv_heads)};
      const Memory none;
      run(stream, kKvCommit,
          {whole(*to.layers[p][l]), bound(from_segment ? segments_.layers[source][l] : none),
           bound(from_segment || tail_.keys.empty() ? none : tail_.keys[l]),
           bound(from_segment || tail_.values.empty() ? none : tail_.values[l]), whole(*gather),
           whole(fault)},
          push, {std::min(r.count, device_->limits().max_groups), u32(shape().n_kv_heads)});
    }
  }
  return gather;
}

void VulkanKvStore::commit(Stream& s, const Plan& plan) {
  constexpr const char* kOp = "KV store: commit";
  books_.check_commit(plan);
  // Tile tables hold positions as 32-bit integers (kv/store_view.hpp).
  if (plan.n_tokens() > std::numeric_limits<std::int32_t>::max()) {
    throw Error(std::string(kOp) + ": the plan's " + std::to_string(plan.n_tokens()) +
                " tokens are more than the Vulkan store's tile tables hold (2^31 - 1)");
  }
  VulkanStream& stream = vulkan_stream(kOp, s, *device_);
  const GatherTable table =
      make_gather_table(plan, books_.plan(), books_.options().layout.group_size);
  TileLists tiles = tile_lists(table);
  // Everything is made before anything changes, so an error leaves the store as it was.
  Segments segments = allocate_segments(kOp, tiles);
  const std::int64_t rows_left = n_tokens() - table.n_committed;
  Tail tail = allocate_tail(kOp, books_.tail_capacity(table.n_committed, rows_left));
  VulkanBuffer fault(device_, 2 * kCommitFaultRecordWords * sizeof(std::uint32_t));

  for (Precision p : kAllPrecisions) {
    const std::vector<TileInfo>& segment = tiles[index_of(p)];
    if (segment.empty()) continue;
    std::vector<std::int32_t> rows;
    for (const TileInfo& t : segment)
      rows.insert(rows.end(), {std::int32_t(t.first_position), t.valid});
    stream.upload(std::as_bytes(std::span(rows)), words_of(*segments.tables[index_of(p)]));
  }
  stream.zero(whole(fault));
  const Memory gather = enqueue_gather(stream, table, segments, fault);
  copy_tail(stream, tail_, tail, table.n_committed - books_.n_committed(), rows_left);
  std::array<std::uint32_t, 2 * kCommitFaultRecordWords> found{};
  stream.download(words_of(fault), std::as_writable_bytes(std::span(found)));
  // After this nothing on the stream reads the old segments and tail, so they may go.
  stream.synchronize();
  throw_commit_fault(found);

  segments_ = std::move(segments);
  tail_ = std::move(tail);
  books_.committed(plan, table.n_committed, std::move(tiles));
}

void VulkanKvStore::throw_commit_fault(std::span<const std::uint32_t> fault) const {
  const bool non_finite = fault[0] != 0;
  if (!non_finite && fault[kCommitFaultRecordWords] == 0) return;
  const std::span<const std::uint32_t> site =
      fault.subspan(non_finite ? 0 : kCommitFaultRecordWords, kCommitFaultRecordWords);
  books_.throw_commit_fault(non_finite, site[1], site[2], int(site[3]), site[4]);
}

StoreView VulkanKvStore::view() const {
  StoreView v;
  const auto n_layers = std::size_t(shape().n_layers);
  for (Precision p : kAllPrecisions) {
    const std::size_t i = index_of(p);
    SegmentView& segment = v.segments[i];
    segment.format = books_.format(p);
    segment.n_tiles = int(books_.tiles()[i].size());
    segment.tile_bytes = std::uint32_t(segment.format.bytes());
    const Memory none;
    for (std::size_t l = 0; l < n_layers; ++l) {
      segment.layers.push_back(bound(segment.n_tiles > 0 ? segments_.layers[i][l] : none));
    }
    segment.table = bound(segments_.tables[i]);
  }
  for (std::size_t l = 0; l < n_layers; ++l) {
    const Memory none;
    v.tail.keys.push_back(bound(tail_.keys.empty() ? none : tail_.keys[l]));
    v.tail.values.push_back(bound(tail_.values.empty() ? none : tail_.values[l]));
    v.tail.rows.push_back(layer_tokens(int(l)) - books_.n_committed());
  }
  v.tail.capacity = tail_.capacity;
  v.n_layers = shape().n_layers;
  v.n_kv_heads = shape().n_kv_heads;
  v.head_dim = shape().head_dim;
  v.n_committed = books_.n_committed();
  return v;
}

std::vector<float> VulkanKvStore::decode_tiles(VulkanStream& stream, Precision p, int layer,
                                               int kv_head, int part) const {
  const std::size_t i = index_of(p);
  const gpu::TileFormat& f = books_.format(p);
  const gpu::BlockFormat& block = part == 0 ? f.keys : f.values;
  const auto n_tiles = std::int64_t(books_.tiles()[i].size());
  const auto tile_floats = std::int64_t(block.tokens) * block.head_dim;
  // Decoded in runs of as many tiles as one binding of floats holds.
  const std::int64_t per_run = std::max<std::int64_t>(
      1, std::int64_t(device_->limits().max_storage_range) / (tile_floats * 4));
  std::vector<float> out(std::size_t(n_tiles * tile_floats));
  for (std::int64_t first = 0; first < n_tiles; first += per_run) {
    const std::int64_t n = std::min(per_run, n_tiles - first);
    VulkanBuffer decoded(device_, std::size_t(n * tile_floats) * sizeof(float));
    const QuantUnpackPush push{
        format_push(block),
        u32((std::int64_t(kv_head) * n_tiles + first) * std::int64_t(f.bytes()) +
            (part == 0 ? 0 : std::int64_t(f.values_offset()))),
        u32(std::int64_t(f.bytes())), u32(n), 0};
    const std::int64_t groups = (n * tile_floats + kWorkgroup - 1) / kWorkgroup;
    run(stream, kQuantUnpack, {whole(*segments_.layers[i][std::size_t(layer)]), whole(decoded)},
        push, {u32(std::min<std::int64_t>(groups, device_->limits().max_groups)), 1});
    stream.download({&decoded, 0, ElementType::f32, n * tile_floats, 1},
                    std::as_writable_bytes(std::span(out).subspan(std::size_t(first * tile_floats),
                                                                  std::size_t(n * tile_floats))));
    stream.synchronize();
  }
  return out;
}

KvHeadSnapshot VulkanKvStore::snapshot(int layer, int kv_head) const {
  check_kv_head(shape(), layer, kv_head);
  VulkanStream& stream = own_stream();
  const auto d = std::size_t(shape().head_dim);
  KvHeadSnapshot snap;
  snap.positions = books_.positions(layer);
  snap.keys.reserve(snap.positions.size() * d);
  snap.values.reserve(snap.positions.size() * d);
  const auto tile_floats = std::size_t(books_.options().layout.group_size) * d;
  for (Precision p : kAllPrecisions) {
    const std::vector<TileInfo>& segment = books_.tiles()[index_of(p)];
    if (segment.empty()) continue;
    const std::vector<float> keys = decode_tiles(stream, p, layer, kv_head, 0);
    const std::vector<float> values = decode_tiles(stream, p, layer, kv_head, 1);
    for (std::size_t t = 0; t < segment.size(); ++t) {
      const auto first = std::ptrdiff_t(t * tile_floats);
      const auto end = first + std::ptrdiff_t(std::size_t(segment[t].valid) * d);
      snap.keys.insert(snap.keys.end(), keys.begin() + first, keys.begin() + end);
      snap.values.insert(snap.values.end(), values.begin() + first, values.begin() + end);
    }
  }
  const std::int64_t rows = layer_tokens(layer) - books_.n_committed();
  if (rows > 0) {
    const auto l = std::size_t(layer);
    const std::size_t at = std::size_t(kv_head) * std::size_t(tail_.capacity) * d * kHalf;
    std::vector<std::uint16_t> keys(std::size_t(rows) * d);
    std::vector<std::uint16_t> values(keys.size());
    const auto n = std::int64_t(d);
    stream.download({tail_.keys[l].get(), at, ElementType::f16, rows, n},
                    std::as_writable_bytes(std::span(keys)));
    stream.download({tail_.values[l].get(), at, ElementType::f16, rows, n},
                    std::as_writable_bytes(std::span(values)));
    stream.synchronize();
    for (std::uint16_t h : keys) snap.keys.push_back(f32_from_f16(h));
    for (std::uint16_t h : values) snap.values.push_back(f32_from_f16(h));
  }
  return snap;
}

std::shared_ptr<KvStore> VulkanKvStore::clone(const KvQuantLayout& layout) const {
  constexpr const char* kOp = "KV store: clone";
  gpu::KvBookkeeping books = books_.copy_with(layout);
  auto copy = std::make_shared<VulkanKvStore>(device_, books.options());
  copy->segments_ = allocate_segments(kOp, books_.tiles());
  copy->tail_ = allocate_tail(kOp, tail_.capacity);
  VulkanStream& stream = own_stream();
  auto copy_all = [&stream](const std::vector<Memory>& from, const std::vector<Memory>& to) {
    for (std::size_t i = 0; i < from.size(); ++i) {
      stream.copy(words_of(*from[i]), words_of(*to[i]));
    }
  };
  for (Precision p : kAllPrecisions) {
    const std::size_t i = index_of(p);
    copy_all(segments_.layers[i], copy->segments_.layers[i]);
    if (segments_.tables[i]) {
      stream.copy(words_of(*segments_.tables[i]), words_of(*copy->segments_.tables[i]));
    }
  }
  copy_all(tail_.keys, copy->tail_.keys);
  copy_all(tail_.values, copy->tail_.values);
  stream.synchronize();
  copy->books_ = std::move(books);
  return copy;
}

}  // namespace cocktail::vulkan
