// The GPU backend's quantizing device code (quant/quantize_block.cuh, kv/commit_tile.cuh,
// kv/tile_codes.cuh) compiled for the host through a stand-in for the vendor header
// (tests/support/host_shim/vendor/gpu_runtime.hpp) and run by a block of host threads, as the
// quantizer's and the commit's kernels run it: what it stores must decode to what the CPU
// backend's quantizer and store decode to, up to the rounding of a fused multiply-add, since both
// are meant to do the same arithmetic. This checks the arithmetic, the formats, the commit's
// gather and the block's barrier without a GPU; the device's memory model is for the GPU run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include "cocktail/gather_table.hpp"
#include "cocktail/stored_tiles.hpp"
#include "kv/commit_tile.cuh"
#include "kv/store_view.hpp"
#include "kv/tile_codes.cuh"
#include "kv_store.hpp"
#include "quant/quantize_block.cuh"
#include "quant/quantizer.hpp"
#include "support/failures.hpp"
#include "support/random_kv.hpp"

namespace cocktail::gpu {
namespace {

using testing::Failures;
using testing::random_floats;

// Threads of an emulated block: two groups of 32 lanes, the fewest a launch has.
constexpr unsigned kBlockThreads = 64;

// Floats [tokens][channels], sites token · channels + channel (as the GpuQuantizer's kernel).
struct HostRows {
  const float* values;
  int channels;

  float operator()(int t, int c) const {
    return values[std::size_t(t) * std::size_t(channels) + std::size_t(c)];
  }
  unsigned long long site(int t, int c) const {
    return static_cast<unsigned long long>(t) * static_cast<unsigned long long>(channels) +
           static_cast<unsigned long long>(c);
  }
};

// What the device code stores for `values` and decodes back.
struct Packed {
  std::vector<std::byte> bytes;
  QuantizeFault fault;
  std::vector<float> decoded;
};

Packed pack_on_host(const BlockFormat& f, RangeFit fit, const std::vector<float>& values) {
  Packed p{std::vector<std::byte>(f.bytes(), std::byte{0}), {}, {}};
  gpu_emulation::run(1, kBlockThreads, 0, [&] {
    quantize_block(f, fit, HostRows{values.data(), f.head_dim}, p.bytes.data(), &p.fault);
  });
  for (int t = 0; t < f.tokens; ++t) {
    for (int c = 0; c < f.head_dim; ++c) p.decoded.push_back(dequantize(f, p.bytes.data(), t, c));
  }
  return p;
}

// The same value but for the rounding of scale·code + zero done as one operation or two.
bool same_decoding(float gpu, float cpu, float magnitude) {
  return std::abs(gpu - cpu) <= 0x1p-21f * magnitude;
}

std::vector<float> block_of(int kind, int tokens, int channels, std::mt19937& rng) {
  std::vector<float> v = random_floats(std::size_t(tokens) * std::size_t(channels), rng);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (kind == 1 && i % std::size_t(channels) == 3) v[i] = 20.0f + 80.0f * v[i];
    if (kind == 2) v[i] = 0.3f;
  }
  return v;
}

TEST(GpuDeviceCodeOnHost, QuantizedBlocksDecodeAsTheCpuQuantizersDo) {
  std::mt19937 rng(5);
  for (const Precision p : kAllPrecisions) {
    for (const int g : {32, 64}) {
      for (const QuantAxis axis : {QuantAxis::per_channel, QuantAxis::per_token}) {
        for (const RangeFit fit : {RangeFit::min_max, RangeFit::least_squares}) {
          for (const auto& [tokens, channels] : {std::pair{g, 64}, std::pair{48, 96}}) {
            for (const int kind : {0, 1, 2}) {
              const BlockFormat f{p, axis, tokens, channels, g};
              SCOPED_TRACE(std::string(to_string(p)) + " per-" + std::string(to_string(axis)) +
                           " groups of " + std::to_string(g) + " " + std::string(to_string(fit)) +
                           ", " + std::to_string(tokens) + "x" + std::to_string(channels) +
                           ", data " + std::to_string(kind));
              const std::vector<float> values = block_of(kind, tokens, channels, rng);
              const Packed gpu = pack_on_host(f, fit, values);
              EXPECT_EQ(gpu.fault.non_finite, kNoSite);
              EXPECT_EQ(gpu.fault.beyond_half, kNoSite);

              const cpu::CpuQuantizer quantizer({p, g, axis, fit});
              const BlockShape shape{tokens, channels, CodeOrder::token_major};
              std::vector<std::byte> packed(quantizer.packed_bytes(shape));
              std::vector<float> cpu(values.size());
              quantizer.pack(values, shape, packed);
              quantizer.unpack(packed, shape, cpu);

              float magnitude = 0.0f;
              for (float x : values) magnitude = std::max(magnitude, std::abs(x));
              Failures differ;
              for (std::size_t i = 0; i < values.size(); ++i) {
                differ.add(same_decoding(gpu.decoded[i], cpu[i], magnitude), [&] {
                  return "element " + std::to_string(i) + ": " + std::to_string(values[i]) +
                         " decodes to " + std::to_string(gpu.decoded[i]) + ", on the CPU to " +
                         std::to_string(cpu[i]);
                });
              }
              EXPECT_EQ(differ.count, 0) << differ.first;
            }
          }
        }
      }
    }
  }
}

TEST(GpuDeviceCodeOnHost, NonFiniteAndOverflowingValuesAreRecordedWhereTheyAre) {
  std::mt19937 rng(6);
  std::vector<float> values = random_floats(32 * 64, rng);
  values[5 * 64 + 7] = NAN;
  values[9 * 64 + 2] = INFINITY;
  const BlockFormat int4{Precision::int4, QuantAxis::per_token, 32, 64, 32};
  const Packed nan = pack_on_host(int4, RangeFit::min_max, values);
  EXPECT_EQ(nan.fault.non_finite, 5u * 64 + 7);

  values = random_floats(32 * 64, rng);
  values[4 * 64 + 40] = 1e6f;  // a scale of 1e6/15 does not fit an FP16
  const Packed wide = pack_on_host(int4, RangeFit::min_max, values);
  EXPECT_EQ(wide.fault.non_finite, kNoSite);
  EXPECT_EQ(wide.fault.beyond_half, 4u * 64 + 32);  // its group starts at channel 32

  const BlockFormat fp16{Precision::fp16, QuantAxis::per_token, 32, 64, 32};
  values[4 * 64 + 40] = 1e5f;
  EXPECT_EQ(pack_on_host(fp16, RangeFit::min_max, values).fault.beyond_half, 4u * 64 + 40);
}

// A GPU store's memory as host vectors, committed by running commit_tile for every tile and head
// as GpuKvStore::commit launches it: a block (destination tile, layer × KV head) each.
class HostStore {
 public:
  HostStore(const KvStoreOptions& options) : options_(options) {
    for (Precision p : kAllPrecisions) {
      formats_[std::size_t(p)] = tile_format(p, options.layout, options.shape.head_dim);
    }
  }

  // Every layer's rows at once: the test appends before it commits.
  void append(int layer, const std::vector<float>& k, const std::vector<float>& v) {
    const KvShape& s = options_.shape;
    const auto n = std::int64_t(k.size() / s.token_floats());
    capacity_ = std::max<std::int64_t>(capacity_, 512);
    const std::size_t heads = std::size_t(s.n_layers * s.n_kv_heads);
    keys_.resize(heads * std::size_t(capacity_) * std::size_t(s.head_dim));
    values_.resize(keys_.size());
    for (std::int64_t t = 0; t < n; ++t) {
      for (int h = 0; h < s.n_kv_heads; ++h) {
        for (int c = 0; c < s.head_dim; ++c) {
          const std::size_t from = std::size_t(t) * s.token_floats() +
                                   std::size_t(h) * std::size_t(s.head_dim) + std::size_t(c);
          const std::size_t to = (std::size_t(layer * s.n_kv_heads + h) * std::size_t(capacity_) +
                                  std::size_t(rows_ + t)) *
                                     std::size_t(s.head_dim) +
                                 std::size_t(c);
          keys_[to] = __float2half_rn(k[from]);
          values_[to] = __float2half_rn(v[from]);
        }
      }
    }
    if (layer == s.n_layers - 1) rows_ += n;
  }

  void commit(const Plan& plan) {
    const KvShape& s = options_.shape;
    const int heads = s.n_layers * s.n_kv_heads;
    const GatherTable table = make_gather_table(plan, plan_, options_.layout.group_size);
    const TileLists tiles = tile_lists(table);
    const std::vector<DeviceGatherTile> gather = device_table(table);
    std::array<std::vector<std::byte>, kPrecisions> segments;
    CommitArgs a;
    QuantizeFault fault;
    for (std::size_t p = 0; p < kPrecisions; ++p) {
      segments[p].assign(tiles[p].size() * formats_[p].bytes() * std::size_t(heads), std::byte{0});
      a.formats[p] = formats_[p];
      a.to.base[p] = segments[p].data();
      a.to.n_tiles[p] = int(tiles[p].size());
      a.from.base[p] = segments_[p].data();
      a.from.n_tiles[p] = int(tiles_[p].size());
    }
    a.range = options_.layout.range;
    a.tail_keys = keys_.data();
    a.tail_values = values_.data();
    a.tail_capacity = capacity_;
    a.table = gather.data();
    a.fault = &fault;
    if (!gather.empty()) {
      gpu_emulation::run(dim3(unsigned(gather.size()), unsigned(heads)), kBlockThreads, 0,
                         [&] { commit_tile(a, blockIdx.x, int(blockIdx.y)); });
    }
    ASSERT_EQ(fault.non_finite, kNoSite);
    ASSERT_EQ(fault.beyond_half, kNoSite);
    // The rows that stay move to the front of the tail, as GpuKvStore's copy_tail does.
    const std::int64_t moved = table.n_committed - n_committed_;
    const auto d = std::size_t(s.head_dim);
    for (int head = 0; head < heads; ++head) {
      const std::size_t base = std::size_t(head) * std::size_t(capacity_) * d;
      for (std::vector<__half>* part : {&keys_, &values_}) {
        std::copy(part->begin() + std::ptrdiff_t(base + std::size_t(moved) * d),
                  part->begin() + std::ptrdiff_t(base + std::size_t(rows_) * d),
                  part->begin() + std::ptrdiff_t(base));
      }
    }
    rows_ -= moved;
    segments_ = std::move(segments);
    tiles_ = tiles;
    n_committed_ = table.n_committed;
    plan_ = plan;
  }

  // As GpuKvStore::snapshot decodes it.
  KvHeadSnapshot snapshot(int layer, int kv_head) const {
    const KvShape& s = options_.shape;
    const int head = layer * s.n_kv_heads + kv_head;
    const auto d = std::size_t(s.head_dim);
    KvHeadSnapshot snap;
    snap.positions = storage_positions(tiles_, n_committed_, n_committed_ + rows_);
    for (std::size_t p = 0; p < kPrecisions; ++p) {
      const TileFormat& f = formats_[p];
      for (std::size_t i = 0; i < tiles_[p].size(); ++i) {
        const std::byte* tile =
            segments_[p].data() + (std::size_t(head) * tiles_[p].size() + i) * f.bytes();
        for (int r = 0; r < tiles_[p][i].valid; ++r) {
          for (int c = 0; c < int(d); ++c) {
            snap.keys.push_back(dequantize(f.keys, tile, r, c));
            snap.values.push_back(dequantize(f.values, tile + f.values_offset(), r, c));
          }
        }
      }
    }
    const std::size_t base = std::size_t(head) * std::size_t(capacity_) * d;
    for (std::size_t i = 0; i < std::size_t(rows_) * d; ++i) {
      snap.keys.push_back(__half2float(keys_[base + i]));
      snap.values.push_back(__half2float(values_[base + i]));
    }
    return snap;
  }

 private:
  KvStoreOptions options_;
  std::array<TileFormat, kPrecisions> formats_{};
  std::array<std::vector<std::byte>, kPrecisions> segments_;
  TileLists tiles_;
  std::vector<__half> keys_, values_;
  std::int64_t capacity_ = 0;
  std::int64_t rows_ = 0;  // tail rows of every layer
  std::int64_t n_committed_ = 0;
  Plan plan_;
};

Plan plan_of(std::initializer_list<std::pair<int, Precision>> chunks) {
  Plan plan;
  std::int64_t first = 0;
  for (const auto& [tokens, precision] : chunks) {
    plan.chunks.push_back({int(plan.chunks.size()), first, tokens, 0.0, precision});
    first += tokens;
  }
  return plan;
}

void expect_same_snapshots(const HostStore& gpu, const cpu::CpuKvStore& cpu, const KvShape& s) {
  for (int layer = 0; layer < s.n_layers; ++layer) {
    for (int head = 0; head < s.n_kv_heads; ++head) {
      SCOPED_TRACE("layer " + std::to_string(layer) + " head " + std::to_string(head));
      const KvHeadSnapshot got = gpu.snapshot(layer, head);
      const KvHeadSnapshot want = cpu.snapshot(layer, head);
      ASSERT_EQ(got.positions, want.positions);
      ASSERT_EQ(got.keys.size(), want.keys.size());
      ASSERT_EQ(got.values.size(), want.values.size());
      Failures differ;
      for (std::size_t i = 0; i < got.keys.size(); ++i) {
        // Keys carry an outlier channel of magnitude about 40.
        differ.add(same_decoding(got.keys[i], want.keys[i], 64.0f) &&
                       same_decoding(got.values[i], want.values[i], 8.0f),
                   [&] {
                     return "row " + std::to_string(i / std::size_t(s.head_dim)) + " channel " +
                            std::to_string(i % std::size_t(s.head_dim)) + ": key " +
                            std::to_string(got.keys[i]) + " (CPU " + std::to_string(want.keys[i]) +
                            "), value " + std::to_string(got.values[i]) + " (CPU " +
                            std::to_string(want.values[i]) + ")";
                   });
      }
      EXPECT_EQ(differ.count, 0) << differ.first;
    }
  }
}

// Every precision scattered, chunks ending inside tiles and an FP16 remainder left in the tail,
// then a re-plan that lowers FP16 and INT8 chunks (requantizing them) and commits more tokens:
// each layout's snapshots match the CPU store's.
TEST(GpuDeviceCodeOnHost, CommittedTilesDecodeAsTheCpuStoresDo) {
  const KvShape shape{2, 2, 64};
  const KvQuantLayout layouts[] = {
      {},
      {32, QuantAxis::per_token, QuantAxis::per_channel, RangeFit::min_max},
      {64, QuantAxis::per_channel, QuantAxis::per_token, RangeFit::min_max},
      {32, QuantAxis::per_channel, QuantAxis::per_token, RangeFit::least_squares}};
  const Plan first = plan_of({{32, Precision::int4},
                              {40, Precision::fp16},
                              {32, Precision::int2},
                              {64, Precision::int8},
                              {32, Precision::nf4},
                              {5, Precision::fp16}});
  Plan second = first;
  second.chunks[1].precision = Precision::int4;
  second.chunks[3].precision = Precision::int2;
  second.chunks.push_back({6, 205, 32, 0.0, Precision::int8});
  for (const KvQuantLayout& layout : layouts) {
    SCOPED_TRACE("groups of " + std::to_string(layout.group_size) + ", keys per-" +
                 std::string(to_string(layout.key_axis)) + ", " +
                 std::string(to_string(layout.range)));
    const KvStoreOptions options{shape, layout, 0};
    HostStore gpu(options);
    cpu::CpuKvStore cpu(options);
    std::mt19937 rng(7);
    for (int layer = 0; layer < shape.n_layers; ++layer) {
      const std::size_t floats = 240 * shape.token_floats();
      std::vector<float> k = random_floats(floats, rng);
      const std::vector<float> v = random_floats(floats, rng, 0.5f);
      for (std::size_t i = 3; i < k.size(); i += std::size_t(shape.head_dim)) k[i] *= 8.0f;
      gpu.append(layer, k, v);
      cpu.append(layer, k, v, 240);
    }
    gpu.commit(first);
    cpu.commit(first);
    expect_same_snapshots(gpu, cpu, shape);
    gpu.commit(second);
    cpu.commit(second);
    expect_same_snapshots(gpu, cpu, shape);
  }
}

}  // namespace
}  // namespace cocktail::gpu
