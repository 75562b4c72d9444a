#include "kv_store.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "cocktail/error.hpp"
#include "memory/cpu_buffer.hpp"
#include "quant/half_convert.hpp"

namespace cocktail::cpu {

namespace {

std::size_t index_of(Precision p) {
  return std::size_t(p);
}

void check_options(const KvStoreOptions& o) {
  const KvShape& s = o.shape;
  if (s.n_layers < 1 || s.n_kv_heads < 1 || s.head_dim < 1) {
    throw Error("KV store: layers, KV heads and head_dim must be positive (got " +
                std::to_string(s.n_layers) + ", " + std::to_string(s.n_kv_heads) + ", " +
                std::to_string(s.head_dim) + ")");
  }
  // The kernels walk a tile in blocks of 32 codes along both of its axes.
  if (s.head_dim % 32 != 0) {
    throw Error("KV store: head_dim " + std::to_string(s.head_dim) +
                " is not a multiple of 32, which the CPU kernels need");
  }
  if (o.layout.group_size < 32 || o.layout.group_size % 32 != 0) {
    throw Error("KV store: quant.group_size " + std::to_string(o.layout.group_size) +
                " must be a positive multiple of 32");
  }
}

// Lower precision = later in the enum. A token can only move down, and only from a form good
// enough to requantize from.
bool can_requantize(Precision from, Precision to) {
  return from == to || (to > from && (from == Precision::fp16 || from == Precision::int8));
}

}  // namespace

CpuKvStore::CpuKvStore(const KvStoreOptions& options) : options_(options) {
  check_options(options_);
  formats_ = make_tile_formats(options_.layout, options_.shape.head_dim);
  for (Precision p : kAllPrecisions) {
    key_quantizers_[index_of(p)] = std::make_unique<CpuQuantizer>(options_.layout.key_spec(p));
    value_quantizers_[index_of(p)] = std::make_unique<CpuQuantizer>(options_.layout.value_spec(p));
  }
  heads_.resize(std::size_t(options_.shape.n_layers) * std::size_t(options_.shape.n_kv_heads));
  layer_tokens_.assign(std::size_t(options_.shape.n_layers), 0);
}

std::shared_ptr<KvStore> CpuKvStore::clone(const KvQuantLayout& layout) const {
  if (n_committed_ > 0 && !(layout == options_.layout)) {
    throw Error("KV store: a copy of a committed store must keep its quantization layout");
  }
  KvStoreOptions options = options_;
  options.layout = layout;
  auto copy = std::make_shared<CpuKvStore>(options);
  for (std::size_t i = 0; i < heads_.size(); ++i) {
    const Head& from = heads_[i];
    Head& to = copy->heads_[i];
    to.tail_keys = from.tail_keys;
    to.tail_values = from.tail_values;
    for (Precision p : kAllPrecisions) {
      const std::size_t bytes = index_[index_of(p)].tiles.size() * formats_[index_of(p)].bytes;
      if (bytes == 0) continue;
      to.segment_data[index_of(p)] = hwy::AllocateAligned<std::uint8_t>(bytes);
      std::memcpy(to.segment_data[index_of(p)].get(), from.segment_data[index_of(p)].get(), bytes);
    }
  }
  copy->layer_tokens_ = layer_tokens_;
  copy->index_ = index_;
  copy->locations_ = locations_;
  copy->n_committed_ = n_committed_;
  copy->plan_ = plan_;
  return copy;
}

void CpuKvStore::append(int layer, std::span<const float> k, std::span<const float> v,
                        std::int64_t n_tokens) {
  const KvShape& s = options_.shape;
  check_layer(layer);
  const std::size_t floats = std::size_t(n_tokens) * s.token_floats();
  if (n_tokens < 0 || k.size() != floats || v.size() != floats) {
    throw Error("KV store: append of " + std::to_string(n_tokens) + " tokens to layer " +
                std::to_string(layer) + " needs " + std::to_string(floats) +
                " floats for K and V, got " + std::to_string(k.size()) + " and " +
                std::to_string(v.size()));
  }
  std::int64_t& count = layer_tokens_[std::size_t(layer)];
  if (options_.max_tokens > 0 && count + n_tokens > options_.max_tokens) {
    throw Error("KV store: layer " + std::to_string(layer) + " would hold " +
                std::to_string(count + n_tokens) + " tokens, over the limit of " +
                std::to_string(options_.max_tokens));
  }
  const std::size_t d = std::size_t(s.head_dim);
  for (int h = 0; h < s.n_kv_heads; ++h) {
    Head& hd = head(layer, h);
    const std::size_t old_size = hd.tail_keys.size();
    hd.tail_keys.resize(old_size + std::size_t(n_tokens) * d);
    hd.tail_values.resize(hd.tail_keys.size());
    std::uint16_t* keys = hd.tail_keys.data() + old_size;
    std::uint16_t* values = hd.tail_values.data() + old_size;
    for (std::int64_t t = 0; t < n_tokens; ++t) {
      const std::size_t src = std::size_t(t) * s.token_floats() + std::size_t(h) * d;
      halves_from_floats(k.subspan(src, d), keys + std::size_t(t) * d);
      halves_from_floats(v.subspan(src, d), values + std::size_t(t) * d);
    }
  }
  count += n_tokens;
}

void CpuKvStore::check_layer(int layer) const {
  if (layer < 0 || layer >= options_.shape.n_layers) {
    throw Error("KV store: layer " + std::to_string(layer) + " out of range [0, " +
                std::to_string(options_.shape.n_layers) + ")");
  }
}

void CpuKvStore::check_commit(const Plan& plan) const {
  plan.validate();
  for (std::int64_t n : layer_tokens_) {
    if (n != layer_tokens_[0]) {
      throw Error("KV store: commit while layers hold different token counts (" +
                  std::to_string(layer_tokens_[0]) + " and " + std::to_string(n) +
                  "); append every layer first");
    }
  }
  if (plan.n_tokens() > n_tokens()) {
    throw Error("KV store: plan covers " + std::to_string(plan.n_tokens()) +
                " tokens but the store holds " + std::to_string(n_tokens()));
  }
  if (plan.chunks.size() < plan_.chunks.size()) {
    throw Error("KV store: a new plan has " + std::to_string(plan.chunks.size()) +
                " chunks, fewer than the " + std::to_string(plan_.chunks.size()) +
                " already committed");
  }
  for (std::size_t i = 0; i < plan_.chunks.size(); ++i) {
    const ChunkPlan& was = plan_.chunks[i];
    const ChunkPlan& now = plan.chunks[i];
    if (was.first_token != now.first_token || was.n_tokens != now.n_tokens) {
      throw Error("KV store: chunk " + std::to_string(i) +
                  " changed its token span after it was committed");
    }
    if (!can_requantize(was.precision, now.precision)) {
      throw Error("KV store: chunk " + std::to_string(i) + " cannot go from " +
                  std::string(to_string(was.precision)) + " to " +
                  std::string(to_string(now.precision)) +
                  " (precision only goes down, and only from fp16 or int8)");
    }
  }
}

void CpuKvStore::commit(const Plan& plan) {
  check_commit(plan);
  const int tile_tokens = options_.layout.group_size;

  std::array<SegmentIndex, kAllPrecisions.size()> index;
  std::vector<ChunkLocation> locations(plan.chunks.size());
  std::int64_t new_committed = plan.n_tokens();
  if (!plan.chunks.empty()) {
    const ChunkPlan& last = plan.chunks.back();
    if (last.precision == Precision::fp16 && last.n_tokens % tile_tokens != 0) {
      locations.back().in_tail = true;
      new_committed -= last.n_tokens;
    }
  }
  for (int c : plan.storage_order()) {
    if (locations[std::size_t(c)].in_tail) continue;
    const ChunkPlan& chunk = plan.chunks[std::size_t(c)];
    SegmentIndex& seg = index[index_of(chunk.precision)];
    ChunkLocation& loc = locations[std::size_t(c)];
    loc.precision = chunk.precision;
    loc.first_tile = int(seg.tiles.size());
    seg.chunks.push_back(c);
    for (int t = 0; t < chunk.n_tokens; t += tile_tokens) {
      seg.tiles.push_back({chunk.first_token + t, std::min(tile_tokens, chunk.n_tokens - t)});
    }
    loc.n_tiles = int(seg.tiles.size()) - loc.first_tile;
  }

  const int n_heads = options_.shape.n_layers * options_.shape.n_kv_heads;
#pragma omp parallel for schedule(dynamic)
  for (int i = 0; i < n_heads; ++i) {
    build_head(i / options_.shape.n_kv_heads, i % options_.shape.n_kv_heads, plan, index, locations,
               new_committed);
  }

  index_ = std::move(index);
  locations_ = std::move(locations);
  n_committed_ = new_committed;
  plan_ = plan;
  ++commits_;
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

void CpuKvStore::build_head(int layer, int kv_head, const Plan& plan,
                            const std::array<SegmentIndex, kAllPrecisions.size()>& index,
                            const std::vector<ChunkLocation>& new_locations,
                            std::int64_t new_committed) {
  Head& h = head(layer, kv_head);
  const std::size_t d = std::size_t(options_.shape.head_dim);
  const int tile_tokens = options_.layout.group_size;
  std::vector<float> keys(std::size_t(tile_tokens) * d);
  std::vector<float> values(keys.size());

  std::array<hwy::AlignedFreeUniquePtr<std::uint8_t[]>, kAllPrecisions.size()> data;
  for (Precision p : kAllPrecisions) {
    const SegmentIndex& seg = index[index_of(p)];
    const TileFormat& format = formats_[index_of(p)];
    if (seg.tiles.empty()) continue;  // Highway refuses empty allocations
    data[index_of(p)] = hwy::AllocateAligned<std::uint8_t>(seg.tiles.size() * format.bytes);
    if (!data[index_of(p)]) {
      throw Error("KV store: out of memory for " + std::to_string(seg.tiles.size()) + " " +
                  std::string(to_string(p)) + " tiles");
    }
    for (int c : seg.chunks) {
      const ChunkPlan& chunk = plan.chunks[std::size_t(c)];
      const ChunkLocation& to = new_locations[std::size_t(c)];
      std::uint8_t* out = data[index_of(p)].get() + std::size_t(to.first_tile) * format.bytes;
      if (std::size_t(c) < locations_.size() && !locations_[std::size_t(c)].in_tail) {
        const ChunkLocation& from = locations_[std::size_t(c)];
        const std::uint8_t* old =
            h.segment_data[index_of(from.precision)].get() +
            std::size_t(from.first_tile) * formats_[index_of(from.precision)].bytes;
        if (from.precision == p) {
          std::memcpy(out, old, std::size_t(to.n_tiles) * format.bytes);
          continue;
        }
        for (int t = 0; t < to.n_tiles; ++t) {
          unpack_tile(h, from.precision, from.first_tile + t, keys, values);
          pack_tile(keys.data(), values.data(), p, out + std::size_t(t) * format.bytes);
        }
        continue;
      }
      // From the tail: rows [first_token - n_committed_, ...) of the FP16 tail.
      for (int t = 0; t < to.n_tiles; ++t) {
        const std::int64_t first = chunk.first_token + std::int64_t(t) * tile_tokens - n_committed_;
        const int valid = std::min<int>(tile_tokens, chunk.n_tokens - t * tile_tokens);
        for (int r = 0; r < tile_tokens; ++r) {
          // Padding rows repeat the last token, so they do not widen any group's range.
          const std::size_t src = std::size_t(first + std::min(r, valid - 1)) * d;
          floats_from_halves(std::span(h.tail_keys).subspan(src, d), &keys[std::size_t(r) * d]);
          floats_from_halves(std::span(h.tail_values).subspan(src, d), &values[std::size_t(r) * d]);
        }
        pack_tile(keys.data(), values.data(), p, out + std::size_t(t) * format.bytes);
      }
    }
  }
  h.segment_data = std::move(data);
  const std::size_t moved = std::size_t(new_committed - n_committed_) * d;
  h.tail_keys.erase(h.tail_keys.begin(), h.tail_keys.begin() + std::ptrdiff_t(moved));
  h.tail_values.erase(h.tail_values.begin(), h.tail_values.begin() + std::ptrdiff_t(moved));
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

void CpuKvStore::unpack_tile(const Head& h, Precision p, int tile, std::vector<float>& keys,
                             std::vector<float>& values) const {
  const TileFormat& f = formats_[index_of(p)];
  const auto* bytes = reinterpret_cast<const std::byte*>(h.segment_data[index_of(p)].get()) +
                      std::size_t(tile) * f.bytes;
  key_quantizers_[index_of(p)]->unpack({bytes, f.key.total_bytes}, f.key_shape(), keys);
  value_quantizers_[index_of(p)]->unpack({bytes + f.value_offset, f.value.total_bytes},
                                         f.value_shape(), values);
}

std::size_t CpuKvStore::bytes() const {
  const KvShape& s = options_.shape;
  std::size_t total = 0;
  for (Precision p : kAllPrecisions) {
    total += index_[index_of(p)].tiles.size() * formats_[index_of(p)].bytes *
             std::size_t(s.n_layers) * std::size_t(s.n_kv_heads);
  }
  for (std::int64_t n : layer_tokens_) {
    total += std::size_t(n - n_committed_) * s.token_floats() * 2 * sizeof(std::uint16_t);
  }
  return total;
}

std::vector<SegmentInfo> CpuKvStore::segments() const {
  const KvShape& s = options_.shape;
  const std::size_t heads = std::size_t(s.n_layers) * std::size_t(s.n_kv_heads);
  std::vector<SegmentInfo> out;
  for (Precision p : kAllPrecisions) {
    const SegmentIndex& seg = index_[index_of(p)];
    if (seg.tiles.empty()) continue;
    SegmentInfo info{p, 0, seg.tiles.size() * formats_[index_of(p)].bytes * heads};
    for (const TileInfo& t : seg.tiles) info.n_tokens += t.valid;
    out.push_back(info);
  }
  const std::int64_t tail = n_tokens() - n_committed_;
  if (tail > 0) {
    out.push_back({Precision::fp16, tail,
                   std::size_t(tail) * s.token_floats() * 2 * sizeof(std::uint16_t) *
                       std::size_t(s.n_layers)});
  }
  return out;
}

KvHeadSnapshot CpuKvStore::snapshot(int layer, int kv_head) const {
  const std::size_t d = std::size_t(options_.shape.head_dim);
  const Head& h = head(layer, kv_head);
  KvHeadSnapshot snap;
  std::vector<float> keys(std::size_t(options_.layout.group_size) * d);
  std::vector<float> values(keys.size());
  for (Precision p : kAllPrecisions) {
    const SegmentIndex& seg = index_[index_of(p)];
    for (std::size_t t = 0; t < seg.tiles.size(); ++t) {
      unpack_tile(h, p, int(t), keys, values);
      const TileInfo& tile = seg.tiles[t];
      for (int r = 0; r < tile.valid; ++r) {
        snap.positions.push_back(tile.first_position + r);
        snap.keys.insert(snap.keys.end(), keys.begin() + std::ptrdiff_t(std::size_t(r) * d),
                         keys.begin() + std::ptrdiff_t(std::size_t(r + 1) * d));
        snap.values.insert(snap.values.end(), values.begin() + std::ptrdiff_t(std::size_t(r) * d),
                           values.begin() + std::ptrdiff_t(std::size_t(r + 1) * d));
      }
    }
  }
  const std::size_t tail_rows = h.tail_keys.size() / d;
  for (std::size_t r = 0; r < tail_rows; ++r) {
    snap.positions.push_back(n_committed_ + std::int64_t(r));
  }
  const std::size_t committed_floats = snap.keys.size();
  snap.keys.resize(committed_floats + h.tail_keys.size());
  snap.values.resize(snap.keys.size());
  floats_from_halves(h.tail_keys, snap.keys.data() + committed_floats);
  floats_from_halves(h.tail_values, snap.values.data() + committed_floats);
  return snap;
}

HeadView CpuKvStore::view(int layer, int kv_head) const {
  HeadView v;
  view_into(layer, kv_head, v);
  return v;
}

void CpuKvStore::view_into(int layer, int kv_head, HeadView& v) const {
  const Head& h = head(layer, kv_head);
  v.segments.clear();
  for (Precision p : kAllPrecisions) {
    const SegmentIndex& seg = index_[index_of(p)];
    if (seg.tiles.empty()) continue;
    v.segments.push_back({&formats_[index_of(p)], h.segment_data[index_of(p)].get(),
                          seg.tiles.data(), int(seg.tiles.size())});
  }
  v.tail_keys = h.tail_keys.data();
  v.tail_values = h.tail_values.data();
  v.n_tail = std::int64_t(h.tail_keys.size() / std::size_t(options_.shape.head_dim));
  v.tail_first_position = n_committed_;
}

}  // namespace cocktail::cpu
