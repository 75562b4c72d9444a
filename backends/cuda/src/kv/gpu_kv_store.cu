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

std::size_t index_of(Precision p) {
  return std::size_t(p);
}

// Bytes of the commit's scratch: its table, then the fault record.
std::size_t table_bytes(std::size_t n_tiles) {
  return align_tile(n_tiles * sizeof(DeviceGatherTile));
}

}  // namespace

GpuKvStore::GpuKvStore(std::shared_ptr<const GpuDevice> device, const KvStoreOptions& options)
    : device_(std::move(device)), books_(options) {}

const GpuKvStore& gpu_store(const char* op, const KvStore& store) {
  const auto* gpu = dynamic_cast<const GpuKvStore*>(&store);
  if (gpu == nullptr || std::strcmp(gpu->backend_, kBackendName) != 0) {
    throw Error(std::string(op) + ": the KV store was made by another backend; " + kBackendName +
                " attention reads only a " + kBackendName + " store");
  }
  return *gpu;
}

GpuKvStore::TailMemory GpuKvStore::allocate_tail(std::int64_t capacity) const {
  const std::size_t halves =
      std::size_t(n_heads()) * std::size_t(capacity) * std::size_t(shape().head_dim);
  return {std::make_unique<GpuBuffer>(2 * halves * sizeof(__half), device_->index), capacity};
}

__half* GpuKvStore::tail_keys(const TailMemory& tail) const {
  return tail.buffer ? reinterpret_cast<__half*>(tail.buffer->data()) : nullptr;
}

__half* GpuKvStore::tail_values(const TailMemory& tail) const {
  if (!tail.buffer) return nullptr;
  return tail_keys(tail) +
         std::size_t(n_heads()) * std::size_t(tail.capacity) * std::size_t(shape().head_dim);
}

void GpuKvStore::copy_tail(cudaStream_t stream, const TailMemory& to, std::int64_t first_row,
                           std::int64_t rows) const {
  if (rows <= 0) return;
  const std::size_t row = std::size_t(shape().head_dim) * sizeof(__half);
  const std::size_t from_offset = std::size_t(first_row) * std::size_t(shape().head_dim);
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
  books_.check_append(layer, k, v);
  const float* keys = device_pointer<float>("KV store: append", "k", k);
  const float* values = device_pointer<float>("KV store: append", "v", v);
  use_device(*device_);
  const cudaStream_t native = native_stream("KV store: append", stream);
  const std::int64_t committed = books_.n_committed();
  const std::int64_t rows = books_.layer_tokens(layer) - committed;
  if (rows + k.rows > tail_.capacity) {
    const std::int64_t held = books_.most_layer_tokens() - committed;
    TailMemory grown = allocate_tail(books_.tail_capacity(committed, held + k.rows));
    copy_tail(native, grown, 0, held);
    // Kernels already on the stream may still read the old tail.
    if (tail_.buffer) COCKTAIL_GPU_CHECK(cudaStreamSynchronize(native));
    tail_ = std::move(grown);
    books_.tail_moved();
  }
  const AppendTarget target{tail_keys(tail_),
                            tail_values(tail_),
                            tail_.capacity,
                            layer,
                            shape().n_kv_heads,
                            shape().head_dim,
                            rows};
  launch_append(native, target, keys, values, k.rows);
  books_.appended(layer, k.rows);
}

GpuKvStore::SegmentMemory GpuKvStore::allocate_segments(const TileLists& tiles) const {
  SegmentMemory memory;
  const TileBytes bytes = books_.tile_bytes();
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
  books_.check_commit(plan);
  use_device(*device_);
  const cudaStream_t native = native_stream("KV store: commit", stream);
  const GatherTable table =
      make_gather_table(plan, books_.plan(), books_.options().layout.group_size);
  TileLists tiles = tile_lists(table);
  // Everything is made before anything changes, so an error leaves the store as it was.
  SegmentMemory segments = allocate_segments(tiles);
  const std::int64_t rows_left = n_tokens() - table.n_committed;
  TailMemory tail = allocate_tail(books_.tail_capacity(table.n_committed, rows_left));
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
    args.formats[i] = books_.format(p);
    args.to.base[i] = segments.buffer->data() + segments.tiles_offset[i];
    args.to.n_tiles[i] = int(tiles[i].size());
    args.from.base[i] =
        segments_.buffer ? segments_.buffer->data() + segments_.tiles_offset[i] : nullptr;
    args.from.n_tiles[i] = int(books_.tiles()[i].size());
  }
  args.range = books_.options().layout.range;
  args.tail_keys = tail_keys(tail_);
  args.tail_values = tail_values(tail_);
  args.tail_capacity = tail_.capacity;
  args.table = reinterpret_cast<const DeviceGatherTile*>(scratch.data());
  args.fault = fault_on_device;
  launch_commit(native, args, int(gather.size()), n_heads());
  copy_tail(native, tail, table.n_committed - books_.n_committed(), rows_left);

  QuantizeFault fault;
  COCKTAIL_GPU_CHECK(
      cudaMemcpyAsync(&fault, fault_on_device, sizeof fault, cudaMemcpyDeviceToHost, native));
  // After this nothing on the stream reads the old block and tail, so they may go.
  COCKTAIL_GPU_CHECK(cudaStreamSynchronize(native));
  throw_commit_fault(fault.non_finite, fault.beyond_half);

  segments_ = std::move(segments);
  tail_ = std::move(tail);
  books_.committed(plan, table.n_committed, std::move(tiles));
}

void GpuKvStore::throw_commit_fault(unsigned long long non_finite,
                                    unsigned long long beyond_half) const {
  if (non_finite == kNoSite && beyond_half == kNoSite) return;
  const CommitSite site = commit_site_of(non_finite != kNoSite ? non_finite : beyond_half);
  books_.throw_commit_fault(non_finite != kNoSite, site.head, site.position, site.part,
                            site.channel);
}

const std::byte* GpuKvStore::head_tiles(Precision p, int head) const {
  const std::size_t i = index_of(p);
  return segments_.buffer->data() + segments_.tiles_offset[i] +
         std::size_t(head) * books_.tiles()[i].size() * books_.format(p).bytes();
}

StoreView GpuKvStore::view() const {
  StoreView v;
  for (Precision p : kAllPrecisions) {
    const std::size_t i = index_of(p);
    SegmentView& s = v.segments[i];
    s.format = books_.format(p);
    s.n_tiles = int(books_.tiles()[i].size());
    if (s.n_tiles == 0) continue;
    const std::byte* base = segments_.buffer->data();
    s.base = base + segments_.tiles_offset[i];
    s.valid = reinterpret_cast<const int*>(base + segments_.valid_offset[i]);
    s.first_position = reinterpret_cast<const std::int64_t*>(base + segments_.positions_offset[i]);
  }
  v.tail = {tail_keys(tail_), tail_values(tail_), tail_.capacity};
  v.n_layers = shape().n_layers;
  v.n_kv_heads = shape().n_kv_heads;
  v.head_dim = shape().head_dim;
  v.n_committed = books_.n_committed();
  return v;
}

KvHeadSnapshot GpuKvStore::snapshot(int layer, int kv_head) const {
  check_kv_head(shape(), layer, kv_head);
  use_device(*device_);
  COCKTAIL_GPU_CHECK(cudaDeviceSynchronize());
  const int head = layer * shape().n_kv_heads + kv_head;
  const auto d = std::size_t(shape().head_dim);
  KvHeadSnapshot snap;
  snap.positions = books_.positions(layer);
  snap.keys.reserve(snap.positions.size() * d);
  snap.values.reserve(snap.positions.size() * d);
  std::vector<std::byte> blocks;
  for (Precision p : kAllPrecisions) {
    const std::vector<TileInfo>& segment = books_.tiles()[index_of(p)];
    if (segment.empty()) continue;
    const TileFormat& f = books_.format(p);
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
  const auto rows = std::size_t(layer_tokens(layer) - books_.n_committed());
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
  KvBookkeeping books = books_.copy_with(layout);
  auto copy = std::make_shared<GpuKvStore>(device_, books.options());
  use_device(*device_);
  COCKTAIL_GPU_CHECK(cudaDeviceSynchronize());
  copy->segments_ = allocate_segments(books_.tiles());
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
  copy->books_ = std::move(books);
  return copy;
}

}  // namespace cocktail::gpu
