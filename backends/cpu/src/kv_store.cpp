#include "kv_store.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "cocktail/error.hpp"
#include "cocktail/kv_store_checks.hpp"
#include "memory/cpu_buffer.hpp"
#include "memory/huge_pages.hpp"
#include "quant/half_convert.hpp"

namespace cocktail::cpu {

namespace {

std::size_t index_of(Precision p) {
  return std::size_t(p);
}

// Without a max_tokens the tail starts with room for this many rows, and doubles.
constexpr std::int64_t kMinTailRows = 256;

}  // namespace

CpuKvStore::CpuKvStore(const KvStoreOptions& options) : options_(options) {
  check_kv_store_options(options_);
  formats_ = make_tile_formats(options_.layout, options_.shape.head_dim);
  for (Precision p : kAllPrecisions) {
    key_quantizers_[index_of(p)] = std::make_unique<CpuQuantizer>(options_.layout.key_spec(p));
    value_quantizers_[index_of(p)] = std::make_unique<CpuQuantizer>(options_.layout.value_spec(p));
  }
  layer_tokens_.assign(std::size_t(options_.shape.n_layers), 0);
  tail_ = allocate_tail(tail_capacity(0, 0));
}

std::int64_t CpuKvStore::tail_capacity(std::int64_t committed, std::int64_t rows) const {
  if (options_.max_tokens > 0) return options_.max_tokens - committed;
  return std::max(kMinTailRows, 2 * rows);
}

CpuKvStore::TailMemory CpuKvStore::allocate_tail(std::int64_t capacity) const {
  TailMemory tail;
  tail.capacity = capacity;
  const std::size_t halves =
      std::size_t(n_heads()) * std::size_t(capacity) * std::size_t(options_.shape.head_dim);
  if (halves == 0) return tail;  // Highway refuses empty allocations
  tail.keys = hwy::AllocateAligned<std::uint16_t>(halves);
  tail.values = hwy::AllocateAligned<std::uint16_t>(halves);
  if (!tail.keys || !tail.values) {
    throw Error("KV store: out of memory for an FP16 tail of " + std::to_string(capacity) +
                " tokens (" + std::to_string(2 * halves * sizeof(std::uint16_t)) + " bytes)");
  }
  advise_huge_pages(tail.keys.get(), halves * sizeof(std::uint16_t));
  advise_huge_pages(tail.values.get(), halves * sizeof(std::uint16_t));
  return tail;
}

std::size_t CpuKvStore::tail_offset(const TailMemory& tail, int head) const {
  return std::size_t(head) * std::size_t(tail.capacity) * std::size_t(options_.shape.head_dim);
}

CpuKvStore::TailMemory CpuKvStore::moved_tail(std::int64_t first_row, std::int64_t capacity) const {
  TailMemory moved = allocate_tail(capacity);
  const std::size_t d = std::size_t(options_.shape.head_dim);
  for (int head = 0; head < n_heads(); ++head) {
    const std::int64_t rows =
        layer_tokens_[std::size_t(head / options_.shape.n_kv_heads)] - n_committed_ - first_row;
    const std::size_t from = tail_offset(tail_, head) + std::size_t(first_row) * d;
    const std::size_t to = tail_offset(moved, head);
    std::copy_n(tail_.keys.get() + from, std::size_t(rows) * d, moved.keys.get() + to);
    std::copy_n(tail_.values.get() + from, std::size_t(rows) * d, moved.values.get() + to);
  }
  return moved;
}

CpuKvStore::SegmentMemory CpuKvStore::allocate_segments(const Tiles& tiles) const {
  SegmentMemory memory;
  for (Precision p : kAllPrecisions) {
    memory.offset[index_of(p)] = memory.size;
    memory.size += tiles[index_of(p)].size() * formats_[index_of(p)].bytes * std::size_t(n_heads());
  }
  if (memory.size == 0) return memory;  // Highway refuses empty allocations
  memory.bytes = hwy::AllocateAligned<std::uint8_t>(memory.size);
  if (!memory.bytes) {
    throw Error("KV store: out of memory for " + std::to_string(memory.size) +
                " bytes of segments");
  }
  advise_huge_pages(memory.bytes.get(), memory.size);
  return memory;
}

std::uint8_t* CpuKvStore::segment_data(const SegmentMemory& memory, const Tiles& tiles, Precision p,
                                       int head) const {
  const std::size_t per_head = tiles[index_of(p)].size() * formats_[index_of(p)].bytes;
  return memory.bytes.get() + memory.offset[index_of(p)] + std::size_t(head) * per_head;
}

std::shared_ptr<KvStore> CpuKvStore::clone(const KvQuantLayout& layout) const {
  if (n_committed_ > 0 && !(layout == options_.layout)) {
    throw Error("KV store: a copy of a committed store must keep its quantization layout");
  }
  KvStoreOptions options = options_;
  options.layout = layout;
  auto copy = std::make_shared<CpuKvStore>(options);
  copy->tiles_ = tiles_;
  copy->segments_ = allocate_segments(tiles_);
  std::copy_n(segments_.bytes.get(), segments_.size, copy->segments_.bytes.get());
  copy->layer_tokens_ = layer_tokens_;
  copy->n_committed_ = n_committed_;
  copy->tail_ = moved_tail(0, tail_.capacity);
  copy->plan_ = plan_;
  return copy;
}

void CpuKvStore::append(int layer, std::span<const float> k, std::span<const float> v,
                        std::int64_t n_tokens) {
  const KvShape& s = options_.shape;
  check_kv_append(options_, layer_tokens_, layer, n_tokens, k.size(), v.size());
  std::int64_t& count = layer_tokens_[std::size_t(layer)];
  const std::int64_t rows = count - n_committed_;
  if (rows + n_tokens > tail_.capacity) {
    const std::int64_t most = *std::max_element(layer_tokens_.begin(), layer_tokens_.end());
    tail_ = moved_tail(0, tail_capacity(n_committed_, most - n_committed_ + n_tokens));
  }
  const std::size_t d = std::size_t(s.head_dim);
  for (int h = 0; h < s.n_kv_heads; ++h) {
    const std::size_t at = tail_offset(tail_, head_index(layer, h)) + std::size_t(rows) * d;
    for (std::int64_t t = 0; t < n_tokens; ++t) {
      const std::size_t src = std::size_t(t) * s.token_floats() + std::size_t(h) * d;
      halves_from_floats(k.subspan(src, d), tail_.keys.get() + at + std::size_t(t) * d);
      halves_from_floats(v.subspan(src, d), tail_.values.get() + at + std::size_t(t) * d);
    }
  }
  count += n_tokens;
}

void CpuKvStore::check_layer(int layer) const {
  check_kv_layer(options_.shape, layer);
}

void CpuKvStore::commit(const Plan& plan) {
  check_commit(plan, plan_, layer_tokens_);
  const GatherTable table = make_gather_table(plan, plan_, options_.layout.group_size);
  Tiles tiles = tile_lists(table);
  // Both blocks are made before anything changes, so running out of memory leaves the store
  // as it was.
  SegmentMemory segments = allocate_segments(tiles);
  const std::int64_t moved = table.n_committed - n_committed_;
  TailMemory tail =
      moved_tail(moved, tail_capacity(table.n_committed, n_tokens() - table.n_committed));
#pragma omp parallel for schedule(dynamic)
  for (int head = 0; head < n_heads(); ++head) gather_head(head, table, tiles, segments);

  tiles_ = std::move(tiles);
  segments_ = std::move(segments);
  tail_ = std::move(tail);
  n_committed_ = table.n_committed;
  plan_ = plan;
  ++commits_;
}

void CpuKvStore::gather_head(int head, const GatherTable& table, const Tiles& tiles,
                             const SegmentMemory& into) const {
  const std::size_t d = std::size_t(options_.shape.head_dim);
  const int tile_tokens = options_.layout.group_size;
  std::vector<float> keys(std::size_t(tile_tokens) * d);
  std::vector<float> values(keys.size());
  const std::uint16_t* tail_keys = tail_.keys.get() + tail_offset(tail_, head);
  const std::uint16_t* tail_values = tail_.values.get() + tail_offset(tail_, head);
  for (Precision p : kAllPrecisions) {
    const TileFormat& format = formats_[index_of(p)];
    std::uint8_t* out = segment_data(into, tiles, p, head);
    for (const GatherTile& tile : table.segment(p)) {
      const GatherSource& from = tile.source;
      if (from.place == GatherSource::Place::segment) {
        const std::uint8_t* old =
            segment_data(segments_, tiles_, from.precision, head) +
            std::size_t(from.index) * formats_[index_of(from.precision)].bytes;
        if (from.precision == p) {
          std::copy_n(old, format.bytes, out);
        } else {
          unpack_tile(old, from.precision, keys, values);
          pack_tile(keys.data(), values.data(), p, out);
        }
      } else {
        for (int r = 0; r < tile_tokens; ++r) {
          // Padding rows repeat the last token, so they do not widen any group's range.
          const std::size_t src = std::size_t(from.index + std::min(r, tile.valid - 1)) * d;
          floats_from_halves(std::span(tail_keys + src, d), &keys[std::size_t(r) * d]);
          floats_from_halves(std::span(tail_values + src, d), &values[std::size_t(r) * d]);
        }
        pack_tile(keys.data(), values.data(), p, out);
      }
      out += format.bytes;
    }
  }
}

void CpuKvStore::append(Stream& /*stream*/, int layer, const Tensor& k, const Tensor& v) {
  const auto width = std::int64_t(options_.shape.token_floats());
  expect_tensor("KV store: append", "k", k, ElementType::f32, k.rows, width);
  expect_tensor("KV store: append", "v", v, ElementType::f32, k.rows, width);
  append(layer, host_span<const float>("append", "k", k), host_span<const float>("append", "v", v),
         k.rows);
}

void CpuKvStore::commit(Stream& /*stream*/, const Plan& plan) {
  commit(plan);
}

void CpuKvStore::pack_tile(const float* keys, const float* values, Precision p,
                           std::uint8_t* out) const {
  const TileFormat& f = formats_[index_of(p)];
  const std::size_t n = std::size_t(f.tokens) * std::size_t(f.head_dim);
  auto* bytes = reinterpret_cast<std::byte*>(out);
  key_quantizers_[index_of(p)]->pack({keys, n}, f.key_shape(), {bytes, f.key.total_bytes});
  value_quantizers_[index_of(p)]->pack({values, n}, f.value_shape(),
                                       {bytes + f.value_offset, f.value.total_bytes});
}

void CpuKvStore::unpack_tile(const std::uint8_t* tile, Precision p, std::vector<float>& keys,
                             std::vector<float>& values) const {
  const TileFormat& f = formats_[index_of(p)];
  const auto* bytes = reinterpret_cast<const std::byte*>(tile);
  key_quantizers_[index_of(p)]->unpack({bytes, f.key.total_bytes}, f.key_shape(), keys);
  value_quantizers_[index_of(p)]->unpack({bytes + f.value_offset, f.value.total_bytes},
                                         f.value_shape(), values);
}

TileBytes CpuKvStore::tile_bytes() const {
  TileBytes bytes{};
  for (Precision p : kAllPrecisions) bytes[index_of(p)] = formats_[index_of(p)].bytes;
  return bytes;
}

std::size_t CpuKvStore::bytes() const {
  return stored_bytes(tiles_, tile_bytes(), options_.shape, layer_tokens_, n_committed_);
}

std::vector<SegmentInfo> CpuKvStore::segments() const {
  return segment_infos(tiles_, tile_bytes(), options_.shape, n_tokens() - n_committed_);
}

KvHeadSnapshot CpuKvStore::snapshot(int layer, int kv_head) const {
  check_kv_head(options_.shape, layer, kv_head);
  const std::size_t d = std::size_t(options_.shape.head_dim);
  const int head = head_index(layer, kv_head);
  KvHeadSnapshot snap;
  snap.positions = storage_positions(tiles_, n_committed_, layer_tokens(layer));
  std::vector<float> keys(std::size_t(options_.layout.group_size) * d);
  std::vector<float> values(keys.size());
  for (Precision p : kAllPrecisions) {
    const std::uint8_t* data = segment_data(segments_, tiles_, p, head);
    for (const TileInfo& tile : tiles_[index_of(p)]) {
      unpack_tile(data, p, keys, values);
      data += formats_[index_of(p)].bytes;
      for (int r = 0; r < tile.valid; ++r) {
        snap.keys.insert(snap.keys.end(), keys.begin() + std::ptrdiff_t(std::size_t(r) * d),
                         keys.begin() + std::ptrdiff_t(std::size_t(r + 1) * d));
        snap.values.insert(snap.values.end(), values.begin() + std::ptrdiff_t(std::size_t(r) * d),
                           values.begin() + std::ptrdiff_t(std::size_t(r + 1) * d));
      }
    }
  }
  const std::int64_t tail_rows = layer_tokens(layer) - n_committed_;
  const std::size_t committed_floats = snap.keys.size();
  const std::size_t tail_floats = std::size_t(tail_rows) * d;
  snap.keys.resize(committed_floats + tail_floats);
  snap.values.resize(snap.keys.size());
  const std::size_t at = tail_offset(tail_, head);
  floats_from_halves(std::span(tail_.keys.get() + at, tail_floats),
                     snap.keys.data() + committed_floats);
  floats_from_halves(std::span(tail_.values.get() + at, tail_floats),
                     snap.values.data() + committed_floats);
  return snap;
}

HeadView CpuKvStore::view(int layer, int kv_head) const {
  HeadView v;
  view_into(layer, kv_head, v);
  return v;
}

void CpuKvStore::view_into(int layer, int kv_head, HeadView& v) const {
  const int head = head_index(layer, kv_head);
  v.segments.clear();
  for (Precision p : kAllPrecisions) {
    const std::vector<TileInfo>& tiles = tiles_[index_of(p)];
    if (tiles.empty()) continue;
    v.segments.push_back({&formats_[index_of(p)], segment_data(segments_, tiles_, p, head),
                          tiles.data(), int(tiles.size())});
  }
  const std::size_t at = tail_offset(tail_, head);
  v.tail_keys = tail_.keys.get() + at;
  v.tail_values = tail_.values.get() + at;
  v.n_tail = layer_tokens(layer) - n_committed_;
  v.tail_first_position = n_committed_;
}

}  // namespace cocktail::cpu
