#include "attention/vulkan_attention.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "attention/kernels.hpp"
#include "cocktail/attention_checks.hpp"
#include "cocktail/error.hpp"
#include "compute/kernels.hpp"
#include "gpu_common/decode_split.hpp"
#include "kv/vulkan_kv_store.hpp"
#include "memory/vulkan_stream.hpp"

namespace cocktail::vulkan {

namespace {

constexpr float kLog2e = 1.4426950408889634f;
// Workgroups of the decode kernel that keep a large GPU busy: an H100 holds about 2000 of 128
// invocations at once, and a step's tiles rarely fill more. Vulkan does not say how many a
// device holds, so the split aims at this many; on a smaller device the extra ranges queue.
constexpr int kDecodeWorkgroups = 1024;

std::uint32_t u32(std::int64_t n) {
  return std::uint32_t(n);
}

template <class Push>
void run(VulkanStream& stream, const Kernel& kernel, std::span<const BufferRange> buffers,
         const Push& push, std::array<std::uint32_t, 2> groups) {
  stream.dispatch(kernel, buffers, std::as_bytes(std::span(&push, 1)), groups);
}

const VulkanKvStore& vulkan_store(const char* op, const KvStore& store, const Device& device) {
  const auto* mine = dynamic_cast<const VulkanKvStore*>(&store);
  if (mine == nullptr || &mine->device() != &device) {
    throw Error(std::string(op) + ": the KV store was made by " +
                (mine == nullptr ? "another backend" : "another Vulkan device") +
                "; the Vulkan attention on " + device.name() + " reads only its own stores");
  }
  return *mine;
}

void check_layer(const char* op, const KvShape& shape, int layer) {
  if (layer < 0 || layer >= shape.n_layers) {
    throw Error(std::string(op) + ": layer " + std::to_string(layer) + " out of range [0, " +
                std::to_string(shape.n_layers) + ")");
  }
}

void check_head_dim(const char* op, const KvShape& shape) {
  if (shape.head_dim > kAttentionMaxDim) {
    throw Error(std::string(op) + ": head_dim " + std::to_string(shape.head_dim) + " is over the " +
                std::to_string(kAttentionMaxDim) + " the Vulkan attention kernels take");
  }
}

void check_groups(const char* op, std::int64_t groups, const Device& device) {
  if (groups > std::int64_t(device.limits().max_groups)) {
    throw Error(std::string(op) + ": " + std::to_string(groups) +
                " workgroups along one axis, more than one dispatch of " + device.name() +
                " runs (maxComputeWorkGroupCount, " + std::to_string(device.limits().max_groups) +
                ")");
  }
}

bool empty(const BufferRange& r) {
  return r.buffer == VK_NULL_HANDLE || r.size == 0;
}

// The store bindings of shaders/attention_store.glsl for `layer`, then `extra`. A segment or
// tail that holds nothing binds `stand_in` instead (a binding needs a buffer; its kernel reads
// nothing there).
template <std::size_t N>
std::array<BufferRange, kStoreBindings + N> store_bindings(
    const StoreView& view, int layer, const BufferRange& stand_in,
    const std::array<BufferRange, N>& extra) {
  std::array<BufferRange, kStoreBindings + N> b{};
  const auto or_stand_in = [&](const BufferRange& r) { return empty(r) ? stand_in : r; };
  for (std::size_t i = 0; i < kAllPrecisions.size(); ++i) {
    const SegmentView& segment = view.segments[i];
    const bool has = segment.n_tiles > 0;
    b[i] = has ? or_stand_in(segment.layers[std::size_t(layer)]) : stand_in;
    b[kAllPrecisions.size() + i] = has ? or_stand_in(segment.table) : stand_in;
  }
  const bool tail = view.tail.capacity > 0;
  b[10] = tail ? or_stand_in(view.tail.keys[std::size_t(layer)]) : stand_in;
  b[11] = tail ? or_stand_in(view.tail.values[std::size_t(layer)]) : stand_in;
  for (std::size_t i = 0; i < N; ++i) b[kStoreBindings + i] = extra[i];
  return b;
}

std::array<std::uint32_t, 5> segment_tiles(const StoreView& view) {
  std::array<std::uint32_t, 5> n{};
  for (std::size_t i = 0; i < n.size(); ++i) n[i] = u32(view.segments[i].n_tiles);
  return n;
}

// A decode step's work split and its workspace (the partial states of every query head and
// range: m and l [n_q_heads][splits], then o [n_q_heads][splits][head_dim]), made for one store
// at one version: a run at another version, or for a layer that holds another number of
// tokens, is refused.
class VulkanDecodePlan final : public DecodePlan {
 public:
  VulkanDecodePlan(const VulkanKvStore& store, int n_q_heads, std::shared_ptr<const Device> device)
      : store_(&store),
        version_(store.version()),
        layer_tokens_(store.n_tokens()),
        n_q_heads_(n_q_heads),
        split_(split_for(store, n_q_heads)),
        workspace_(std::move(device), std::size_t(n_q_heads) * std::size_t(split_.splits) *
                                          std::size_t(2 + store.options().shape.head_dim) *
                                          sizeof(float)) {}

  void check_fits(const VulkanKvStore& store, int layer) const {
    check_decode_plan_fits("decode", &store == store_, store.version() != version_, layer_tokens_,
                           layer, store.layer_tokens(layer));
  }

  int n_q_heads() const { return n_q_heads_; }
  const gpu::DecodeSplit& split() const { return split_; }
  BufferRange workspace() const {
    const Allocation& a = workspace_.allocation();
    return {a.buffer, a.offset, workspace_.size()};
  }

 private:
  static gpu::DecodeSplit split_for(const VulkanKvStore& store, int n_q_heads) {
    const KvShape& shape = store.options().shape;
    const StoreView view = store.view();
    std::array<int, kAllPrecisions.size()> tiles{};
    for (std::size_t i = 0; i < tiles.size(); ++i) tiles[i] = view.segments[i].n_tiles;
    const std::int64_t n = gpu::count_decode_tiles(tiles, store.n_tokens() - store.n_committed(),
                                                   store.options().layout.group_size);
    // One range is one workgroup here, where the CUDA kernel gives it a warp of a block.
    return gpu::split_decode(n, shape.n_kv_heads,
                             gpu::batch_query_heads(n_q_heads / shape.n_kv_heads),
                             kDecodeWorkgroups / gpu::kDecodeWarps);
  }

  const VulkanKvStore* store_;
  std::uint64_t version_;
  std::int64_t layer_tokens_;
  int n_q_heads_;
  gpu::DecodeSplit split_;
  VulkanBuffer workspace_;
};

}  // namespace

std::unique_ptr<DecodePlan> VulkanAttention::plan_decode(const KvStore& store, int n_q_heads) {
  const VulkanKvStore& mine = vulkan_store("plan_decode", store, *device_);
  const KvShape& shape = store.options().shape;
  check_query_heads("plan_decode", shape, n_q_heads);
  check_head_dim("plan_decode", shape);
  if (mine.n_tokens() == 0) throw Error("plan_decode: the KV store is empty");
  auto plan = std::make_unique<VulkanDecodePlan>(mine, n_q_heads, device_);
  check_groups("plan_decode", plan->split().splits, *device_);
  check_groups("plan_decode", std::int64_t(shape.n_kv_heads) * plan->split().batches.batches,
               *device_);
  return plan;
}

void VulkanAttention::decode(Stream& s, DecodePlan& plan, const KvStore& store, int layer,
                             const Tensor& q, float softmax_scale, const Tensor& out) {
  auto* mine = dynamic_cast<VulkanDecodePlan*>(&plan);
  if (mine == nullptr) {
    throw Error("decode: the decode plan was made by another backend's plan_decode");
  }
  const VulkanKvStore& vk = vulkan_store("decode", store, *device_);
  const KvShape& shape = store.options().shape;
  check_layer("decode", shape, layer);
  mine->check_fits(vk, layer);
  const std::int64_t width = std::int64_t(mine->n_q_heads()) * shape.head_dim;
  expect_tensor("decode", "q", q, ElementType::f32, 1, width);
  expect_tensor("decode", "out", out, ElementType::f32, 1, width);
  VulkanStream& stream = vulkan_stream("decode", s, *device_);
  const KernelOperand qo = kernel_operand("decode", "q", q, *device_);
  const KernelOperand oo = kernel_operand("decode", "out", out, *device_);

  const StoreView view = vk.view();
  const KvQuantLayout& layout = store.options().layout;
  const gpu::DecodeSplit& split = mine->split();
  AttentionDecodePush push{};
  push.head_dim = u32(shape.head_dim);
  push.group_size = u32(layout.group_size);
  push.key_axis = u32(int(layout.key_axis));
  push.value_axis = u32(int(layout.value_axis));
  push.group = u32(mine->n_q_heads() / shape.n_kv_heads);
  push.batch_heads = u32(split.batches.heads);
  push.batches = u32(split.batches.batches);
  push.tiles = u32(split.tiles);
  push.splits = u32(split.splits);
  push.tail_rows = u32(view.tail.rows[std::size_t(layer)]);
  push.tail_capacity = u32(view.tail.capacity);
  push.q_first = qo.first;
  push.n_q_heads = u32(mine->n_q_heads());
  push.scale = softmax_scale * kLog2e;
  const std::array<std::uint32_t, 5> tiles = segment_tiles(view);
  std::copy(tiles.begin(), tiles.end(), push.n_tiles);
  const BufferRange workspace = mine->workspace();
  const auto bindings = store_bindings<2>(view, layer, qo.binding, {qo.binding, workspace});
  run(stream, kAttentionDecode, bindings, push,
      {u32(split.splits), u32(std::int64_t(shape.n_kv_heads) * split.batches.batches)});

  const AttentionMergePush merge{u32(mine->n_q_heads()), u32(split.splits), u32(shape.head_dim),
                                 oo.first};
  const std::array<BufferRange, 2> merge_bindings = {workspace, oo.binding};
  run(stream, kAttentionMerge, merge_bindings, merge, {u32(mine->n_q_heads()), 1});
}

void VulkanAttention::prefill(Stream& s, const KvStore& store, int layer, const Tensor& q,
                              int n_q_heads, float softmax_scale, const Tensor& out) {
  const VulkanKvStore& vk = vulkan_store("prefill", store, *device_);
  const KvShape& shape = store.options().shape;
  check_layer("prefill", shape, layer);
  check_query_heads("prefill", shape, n_q_heads);
  check_head_dim("prefill", shape);
  const std::int64_t width = std::int64_t(n_q_heads) * shape.head_dim;
  expect_tensor("prefill", "q", q, ElementType::f32, q.rows, width);
  expect_tensor("prefill", "out", out, ElementType::f32, q.rows, width);
  const std::int64_t tail_rows = vk.layer_tokens(layer) - vk.n_committed();
  check_prefill_tokens("prefill", layer, q.rows, tail_rows);
  VulkanStream& stream = vulkan_stream("prefill", s, *device_);
  const KernelOperand qo = kernel_operand("prefill", "q", q, *device_);
  const KernelOperand oo = kernel_operand("prefill", "out", out, *device_);
  if (q.rows == 0) return;
  const std::int64_t groups =
      (q.rows * (n_q_heads / shape.n_kv_heads) + kPrefillRows - 1) / kPrefillRows;
  check_groups("prefill", groups, *device_);

  const StoreView view = vk.view();
  const KvQuantLayout& layout = store.options().layout;
  AttentionPrefillPush push{};
  push.head_dim = u32(shape.head_dim);
  push.group_size = u32(layout.group_size);
  push.key_axis = u32(int(layout.key_axis));
  push.value_axis = u32(int(layout.value_axis));
  push.group = u32(n_q_heads / shape.n_kv_heads);
  push.n_q_heads = u32(n_q_heads);
  push.n_new = u32(q.rows);
  push.tail_rows = u32(tail_rows);
  push.tail_capacity = u32(view.tail.capacity);
  push.chunk = u32(std::min(kPrefillMaxChunk, kPrefillChunkFloats / shape.head_dim));
  push.q_first = qo.first;
  push.out_first = oo.first;
  push.scale = softmax_scale * kLog2e;
  const std::array<std::uint32_t, 5> tiles = segment_tiles(view);
  std::copy(tiles.begin(), tiles.end(), push.n_tiles);
  const auto bindings = store_bindings<2>(view, layer, qo.binding, {qo.binding, oo.binding});
  run(stream, kAttentionPrefill, bindings, push, {u32(groups), u32(shape.n_kv_heads)});
}

void VulkanAttention::attention_mass(Stream& s, const KvStore& store, int layer, const Tensor& q,
                                     int n_q_heads, float softmax_scale, const Tensor& mass) {
  const VulkanKvStore& vk = vulkan_store("attention_mass", store, *device_);
  const KvShape& shape = store.options().shape;
  check_layer("attention_mass", shape, layer);
  check_query_heads("attention_mass", shape, n_q_heads);
  check_head_dim("attention_mass", shape);
  const std::int64_t n_tokens = vk.layer_tokens(layer);
  check_attention_mass("attention_mass", vk.n_committed(), q.rows, n_tokens);
  expect_tensor("attention_mass", "q", q, ElementType::f32, q.rows,
                std::int64_t(n_q_heads) * shape.head_dim);
  expect_tensor("attention_mass", "mass", mass, ElementType::f32, n_q_heads, n_tokens);
  VulkanStream& stream = vulkan_stream("attention_mass", s, *device_);
  const KernelOperand qo = kernel_operand("attention_mass", "q", q, *device_);
  const KernelOperand mo = kernel_operand("attention_mass", "mass", mass, *device_);
  check_groups("attention_mass", std::max<std::int64_t>(q.rows, n_q_heads), *device_);
  check_groups("attention_mass", (n_tokens + kWorkgroup - 1) / kWorkgroup, *device_);

  const StoreView view = vk.view();
  const BufferRange keys = view.tail.keys[std::size_t(layer)];
  const VulkanBuffer& stats = mass_stats(std::size_t(n_q_heads) * std::size_t(q.rows) * 8);
  const BufferRange stats_range{stats.allocation().buffer, stats.allocation().offset, stats.size()};
  AttentionMassPush push{};
  push.head_dim = u32(shape.head_dim);
  push.group = u32(n_q_heads / shape.n_kv_heads);
  push.n_q_heads = u32(n_q_heads);
  push.n_tokens = u32(n_tokens);
  push.n_query = u32(q.rows);
  push.tail_capacity = u32(view.tail.capacity);
  push.q_first = qo.first;
  push.scale = softmax_scale * kLog2e;
  push.mass_first = mo.first;
  const std::array<BufferRange, 3> stats_bindings = {keys, qo.binding, stats_range};
  stream.dispatch(kAttentionMassStats, stats_bindings,
                  std::as_bytes(std::span(&push, 1)).first(kAttentionMassStats.push_bytes),
                  {u32(q.rows), u32(n_q_heads)});
  const std::array<BufferRange, 4> mass_bindings = {keys, qo.binding, stats_range, mo.binding};
  run(stream, kAttentionMass, mass_bindings, push,
      {u32((n_tokens + kWorkgroup - 1) / kWorkgroup), u32(n_q_heads)});
}

const VulkanBuffer& VulkanAttention::mass_stats(std::size_t bytes) {
  const std::lock_guard lock(stats_mutex_);
  if (stats_.empty() || stats_.back()->size() < bytes) {
    stats_.push_back(std::make_unique<VulkanBuffer>(device_, bytes));
  }
  return *stats_.back();
}

}  // namespace cocktail::vulkan
