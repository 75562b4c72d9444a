#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "cocktail/error.hpp"
#include "cocktail/gather_table.hpp"
#include "cocktail/kv_store_checks.hpp"
#include "kv/append_kernels.cuh"
#include "kv/commit_kernels.cuh"
#include "kv/gpu_kv_store.hpp"
#include "kv/tile_codes.cuh"
#include "runtime/gpu_check.hpp"
#include "runtime/gpu_stream.hpp"

namespace cocktail::gpu {

namespace {

// Without a max_tokens the tail starts with room for this many rows, and doubles.
constexpr std::int64_t kMinTailRows = 256;

std::size_t index_of(Precision p) {
  return std::size_t(p);
}

// Bytes of the commit's scratch: its table, then the fault record.
std::size_t table_bytes(std::size_t n_tiles) {
  return align_tile(n_tiles * sizeof(DeviceGatherTile));
}

}  // namespace

GpuKvStore::GpuKvStore(std::shared_ptr<const GpuDevice> device, const KvStoreOptions& options)
    : device_(std::move(device)), options_(options) {
  check_kv_store_options(options_);
  for (Precision p : kAllPrecisions) {
    formats_[index_of(p)] = tile_format(p, options_.layout, options_.shape.head_dim);
  }
  layer_tokens_.assign(std::size_t(options_.shape.n_layers), 0);
}

std::int64_t GpuKvStore::n_tokens() const {
  return layer_tokens_[0];
}

std::int64_t GpuKvStore::n_committed() const {
  return n_committed_;
}

const Plan& GpuKvStore::plan() const {
  return plan_;
}

std::int64_t GpuKvStore::layer_tokens(int layer) const {
  check_kv_layer(options_.shape, layer);
  return layer_tokens_[std::size_t(layer)];
}

std::uint64_t GpuKvStore::version() const {
  return version_;
}

std::int64_t GpuKvStore::tail_capacity(std::int64_t committed, std::int64_t rows) const {
  if (options_.max_tokens > 0) return options_.max_tokens - committed;
  return std::max(kMinTailRows, 2 * rows);
}

std::int64_t GpuKvStore::most_layer_tokens() const {
  return *std::max_element(layer_tokens_.begin(), layer_tokens_.end());
}

GpuKvStore::TailMemory GpuKvStore::allocate_tail(std::int64_t capacity) const {
  const std::size_t halves =
      std::size_t(n_heads()) * std::size_t(capacity) * std::size_t(options_.shape.head_dim);
  return {std::make_unique<GpuBuffer>(2 * halves * sizeof(__half), device_->index), capacity};
}

__half* GpuKvStore::tail_keys(const TailMemory& tail) const {
  return tail.buffer ? reinterpret_cast<__half*>(tail.buffer->data()) : nullptr;
}

__half* GpuKvStore::tail_values(const TailMemory& tail) const {
  if (!tail.buffer) return nullptr;
  return tail_keys(tail) +
         std::size_t(n_heads()) * std::size_t(tail.capacity) * std::size_t(options_.shape.head_dim);
}

void GpuKvStore::copy_tail(cudaStream_t stream, const TailMemory& to, std::int64_t first_row,
                           std::int64_t rows) const {
  if (rows <= 0) return;
  const std::size_t row = std::size_t(options_.shape.head_dim) * sizeof(__half);
  const std::size_t from_offset = std::size_t(first_row) * std::size_t(options_.shape.head_dim);
  // One 2D copy per part: a head's rows are a "row" of the copy, each head a pitch apart.
  COCKTAIL_GPU_CHECK(cudaMemcpy2DAsync(tail_keys(to), std::size_t(to.capacity) * row,
                                       tail_keys(tail_) + from_offset,
                                       std::size_t(tail_.capacity) * row, std::size_t(rows) * row,
                                       std::size_t(n_heads()), cudaMemcpyDeviceToDevice, stream));
  COCKTAIL_GPU_CHECK(cudaMemcpy2DAsync(tail_values(to), std::size_t(to.capacity) * row,
                                       tail_values(tail_) + from_offset,
                                       std::size_t(tail_.capacity) * row, std::size_t(rows) * row,
                                       std::size_t(n_heads()), cudaMemcpyDeviceToDevice, stream));
}

void GpuKvStore::append(Stream& stream, int layer, const Tensor& k, const Tensor& v) {
  const auto width = std::int64_t(options_.shape.token_floats());
  expect_tensor("KV store: append", "k", k, ElementType::f32, k.rows, width);
  expect_tensor("KV store: append", "v", v, ElementType::f32, k.rows, width);
  check_kv_append(options_, layer_tokens_, layer, k.rows, std::size_t(k.elements()),
                  std::size_t(v.elements()));
  const float* keys = device_pointer<float>("KV store: append", "k", k);
  const float* values = device_pointer<float>("KV store: append", "v", v);
  use_device(*device_);
  const cudaStream_t native = native_stream("KV store: append", stream);
  std::int64_t& count = layer_tokens_[std::size_t(layer)];
  const std::int64_t rows = count - n_committed_;
  if (rows + k.rows > tail_.capacity) {
    const std::int64_t held = most_layer_tokens() - n_committed_;
    TailMemory grown = allocate_tail(tail_capacity(n_committed_, held + k.rows));
    copy_tail(native, grown, 0, held);
    // Kernels already on the stream may still read the old tail.
    if (tail_.buffer) COCKTAIL_GPU_CHECK(cudaStreamSynchronize(native));
    tail_ = std::move(grown);
    ++version_;
  }
  const AppendTarget target{tail_keys(tail_),
                            tail_values(tail_),
                            tail_.capacity,
                            layer,
                            options_.shape.n_kv_heads,
                            options_.shape.head_dim,
                            rows};
  launch_append(native, target, keys, values, k.rows);
  count += k.rows;
  if (layer == 0) ++version_;
}

GpuKvStore::SegmentMemory GpuKvStore::allocate_segments(const TileLists& tiles) const {
  SegmentMemory memory;
  const TileBytes bytes = tile_bytes();
  for (Precision p : kAllPrecisions) {
    memory.tiles_offset[index_of(p)] = memory.size;
    memory.size += tiles[index_of(p)].size() * bytes[index_of(p)] * std::size_t(n_heads());
  }
  for (Precision p : kAllPrecisions) {
    const std::size_t n = tiles[index_of(p)].size();
    memory.positions_offset[index_of(p)] = memory.size;
    memory.size += align_tile(n * sizeof(std::int64_t));
    memory.valid_offset[index_of(p)] = memory.size;
    memory.size += align_tile(n * sizeof(int));
  }
  memory.buffer = std::make_unique<GpuBuffer>(memory.size, device_->index);
  return memory;
}

std::vector<std::byte> GpuKvStore::tile_tables(const TileLists& tiles,
                                               const SegmentMemory& memory) const {
  const std::size_t first = memory.positions_offset[0];
  std::vector<std::byte> out(memory.size - first);
  for (Precision p : kAllPrecisions) {
    const std::vector<TileInfo>& segment = tiles[index_of(p)];
    for (std::size_t i = 0; i < segment.size(); ++i) {
      std::memcpy(
          out.data() + memory.positions_offset[index_of(p)] - first + i * sizeof(std::int64_t),
          &segment[i].first_position, sizeof(std::int64_t));
      std::memcpy(out.data() + memory.valid_offset[index_of(p)] - first + i * sizeof(int),
                  &segment[i].valid, sizeof(int));
    }
  }
  return out;
}

void GpuKvStore::commit(Stream& stream, const Plan& plan) {
  check_commit(plan, plan_, layer_tokens_);
  use_device(*device_);
  const cudaStream_t native = native_stream("KV store: commit", stream);
  const GatherTable table = make_gather_table(plan, plan_, options_.layout.group_size);
  TileLists tiles = tile_lists(table);
  // Everything is made before anything changes, so an error leaves the store as it was.
  SegmentMemory segments = allocate_segments(tiles);
  const std::int64_t rows_left = n_tokens() - table.n_committed;
  TailMemory tail = allocate_tail(tail_capacity(table.n_committed, rows_left));
  const std::vector<DeviceGatherTile> gather = device_table(table);
  const GpuBuffer scratch(table_bytes(gather.size()) + sizeof(QuantizeFault), device_->index);
  auto* fault_on_device =
      reinterpret_cast<QuantizeFault*>(scratch.data() + table_bytes(gather.size()));
  const QuantizeFault clean;
  const std::vector<std::byte> tables = tile_tables(tiles, segments);

  COCKTAIL_GPU_CHECK(cudaMemcpyAsync(scratch.data(), gather.data(),
                                     gather.size() * sizeof(DeviceGatherTile),
                                     cudaMemcpyHostToDevice, native));
  COCKTAIL_GPU_CHECK(
      cudaMemcpyAsync(fault_on_device, &clean, sizeof clean, cudaMemcpyHostToDevice, native));
  if (segments.size > 0) {
    // Zeroed so that the padding of every tile is the same bytes in every store.
    COCKTAIL_GPU_CHECK(
        cudaMemsetAsync(segments.buffer->data(), 0, segments.positions_offset[0], native));
    COCKTAIL_GPU_CHECK(cudaMemcpyAsync(segments.buffer->data() + segments.positions_offset[0],
                                       tables.data(), tables.size(), cudaMemcpyHostToDevice,
                                       native));
  }

  CommitArgs args;
  for (Precision p : kAllPrecisions) {
    const std::size_t i = index_of(p);
    args.formats[i] = formats_[i];
    args.to.base[i] = segments.buffer->data() + segments.tiles_offset[i];
    args.to.n_tiles[i] = int(tiles[i].size());
    args.from.base[i] =
        segments_.buffer ? segments_.buffer->data() + segments_.tiles_offset[i] : nullptr;
    args.from.n_tiles[i] = int(tiles_[i].size());
  }
  args.range = options_.layout.range;
  args.tail_keys = tail_keys(tail_);
  args.tail_values = tail_values(tail_);
  args.tail_capacity = tail_.capacity;
  args.table = reinterpret_cast<const DeviceGatherTile*>(scratch.data());
  args.fault = fault_on_device;
  launch_commit(native, args, int(gather.size()), n_heads());
  copy_tail(native, tail, table.n_committed - n_committed_, rows_left);

  QuantizeFault fault;
  COCKTAIL_GPU_CHECK(
      cudaMemcpyAsync(&fault, fault_on_device, sizeof fault, cudaMemcpyDeviceToHost, native));
  // After this nothing on the stream reads the old block and tail, so they may go.
  COCKTAIL_GPU_CHECK(cudaStreamSynchronize(native));
  throw_commit_fault(fault.non_finite, fault.beyond_half);

  tiles_ = std::move(tiles);
  segments_ = std::move(segments);
  tail_ = std::move(tail);
  n_committed_ = table.n_committed;
  plan_ = plan;
  ++version_;
}

void GpuKvStore::throw_commit_fault(unsigned long long non_finite,
                                    unsigned long long beyond_half) const {
  if (non_finite == kNoSite && beyond_half == kNoSite) return;
  const CommitSite site = commit_site_of(non_finite != kNoSite ? non_finite : beyond_half);
  const int kv_heads = options_.shape.n_kv_heads;
  throw Error(std::string("KV store: commit: ") + (site.part == 0 ? "a key" : "a value") +
              (non_finite != kNoSite ? "" : ", or its quantization group,") + " of layer " +
              std::to_string(site.head / kv_heads) + ", KV head " +
              std::to_string(site.head % kv_heads) + " at position " +
              std::to_string(site.position) + ", channel " + std::to_string(site.channel) +
              (non_finite != kNoSite ? " is not finite" : " is beyond the FP16 range") +
              "; nothing was committed");
}

TileBytes GpuKvStore::tile_bytes() const {
  TileBytes bytes{};
  for (Precision p : kAllPrecisions) bytes[index_of(p)] = formats_[index_of(p)].bytes();
  return bytes;
}

std::size_t GpuKvStore::bytes() const {
  return stored_bytes(tiles_, tile_bytes(), options_.shape, layer_tokens_, n_committed_);
}

std::vector<SegmentInfo> GpuKvStore::segments() const {
  return segment_infos(tiles_, tile_bytes(), options_.shape, n_tokens() - n_committed_);
}

const std::byte* GpuKvStore::head_tiles(Precision p, int head) const {
  const std::size_t i = index_of(p);
  return segments_.buffer->data() + segments_.tiles_offset[i] +
         std::size_t(head) * tiles_[i].size() * formats_[i].bytes();
}

StoreView GpuKvStore::view() const {
  StoreView v;
  for (Precision p : kAllPrecisions) {
    const std::size_t i = index_of(p);
    SegmentView& s = v.segments[i];
    s.format = formats_[i];
    s.n_tiles = int(tiles_[i].size());
    if (s.n_tiles == 0) continue;
    const std::byte* base = segments_.buffer->data();
    s.base = base + segments_.tiles_offset[i];
    s.valid = reinterpret_cast<const int*>(base + segments_.valid_offset[i]);
    s.first_position = reinterpret_cast<const std::int64_t*>(base + segments_.positions_offset[i]);
  }
  v.tail = {tail_keys(tail_), tail_values(tail_), tail_.capacity};
  v.n_layers = options_.shape.n_layers;
  v.n_kv_heads = options_.shape.n_kv_heads;
  v.head_dim = options_.shape.head_dim;
  v.n_committed = n_committed_;
  return v;
}

KvHeadSnapshot GpuKvStore::snapshot(int layer, int kv_head) const {
  check_kv_head(options_.shape, layer, kv_head);
  use_device(*device_);
  COCKTAIL_GPU_CHECK(cudaDeviceSynchronize());
  const int head = layer * options_.shape.n_kv_heads + kv_head;
  const auto d = std::size_t(options_.shape.head_dim);
  KvHeadSnapshot snap;
  snap.positions = storage_positions(tiles_, n_committed_, layer_tokens(layer));
  snap.keys.reserve(snap.positions.size() * d);
  snap.values.reserve(snap.positions.size() * d);
  std::vector<std::byte> blocks;
  for (Precision p : kAllPrecisions) {
    const std::vector<TileInfo>& segment = tiles_[index_of(p)];
    if (segment.empty()) continue;
    const TileFormat& f = formats_[index_of(p)];
    blocks.resize(segment.size() * f.bytes());
    COCKTAIL_GPU_CHECK(
        cudaMemcpy(blocks.data(), head_tiles(p, head), blocks.size(), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < segment.size(); ++i) {
      const std::byte* tile = blocks.data() + i * f.bytes();
      for (int r = 0; r < segment[i].valid; ++r) {
        for (int c = 0; c < int(d); ++c) {
          snap.keys.push_back(dequantize(f.keys, tile, r, c));
          snap.values.push_back(dequantize(f.values, tile + f.values_offset(), r, c));
        }
      }
    }
  }
  const auto rows = std::size_t(layer_tokens(layer) - n_committed_);
  const std::size_t at = std::size_t(head) * std::size_t(tail_.capacity) * d;
  std::vector<std::uint16_t> halves(rows * d);
  auto read_tail = [&](const __half* part, std::vector<float>& out) {
    if (halves.empty()) return;
    COCKTAIL_GPU_CHECK(cudaMemcpy(halves.data(), part + at, halves.size() * sizeof(__half),
                                  cudaMemcpyDeviceToHost));
    for (std::uint16_t h : halves) out.push_back(float_from_half_bits(h));
  };
  read_tail(tail_keys(tail_), snap.keys);
  read_tail(tail_values(tail_), snap.values);
  return snap;
}

std::shared_ptr<KvStore> GpuKvStore::clone(const KvQuantLayout& layout) const {
  if (n_committed_ > 0 && !(layout == options_.layout)) {
    throw Error("KV store: a copy of a committed store must keep its quantization layout");
  }
  KvStoreOptions options = options_;
  options.layout = layout;
  auto copy = std::make_shared<GpuKvStore>(device_, options);
  use_device(*device_);
  COCKTAIL_GPU_CHECK(cudaDeviceSynchronize());
  copy->tiles_ = tiles_;
  copy->segments_ = allocate_segments(tiles_);
  copy->tail_ = allocate_tail(tail_.capacity);
  if (segments_.size > 0) {
    COCKTAIL_GPU_CHECK(cudaMemcpy(copy->segments_.buffer->data(), segments_.buffer->data(),
                                  segments_.size, cudaMemcpyDeviceToDevice));
  }
  if (tail_.buffer && tail_.buffer->size() > 0) {
    COCKTAIL_GPU_CHECK(cudaMemcpy(copy->tail_.buffer->data(), tail_.buffer->data(),
                                  tail_.buffer->size(), cudaMemcpyDeviceToDevice));
  }
  // Device-to-device copies may still run when cudaMemcpy returns.
  COCKTAIL_GPU_CHECK(cudaDeviceSynchronize());
  copy->layer_tokens_ = layer_tokens_;
  copy->n_committed_ = n_committed_;
  copy->version_ = version_;
  copy->plan_ = plan_;
  return copy;
}

}  // namespace cocktail::gpu
