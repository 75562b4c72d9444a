#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "attention/attention_kernels.hpp"
#include "attention/gpu_attention.hpp"
#include "cocktail/attention_checks.hpp"
#include "cocktail/error.hpp"
#include "gpu_common/decode_split.hpp"
#include "kv/gpu_kv_store.hpp"
#include "runtime/gpu_buffer.hpp"
#include "runtime/gpu_check.hpp"
#include "runtime/gpu_stream.hpp"

namespace cocktail::gpu {

namespace {

void check_layer(const char* op, const KvShape& shape, int layer) {
  if (layer < 0 || layer >= shape.n_layers) {
    throw Error(std::string(op) + ": layer " + std::to_string(layer) + " out of range [0, " +
                std::to_string(shape.n_layers) + ")");
  }
}

// Query (and output) rows are [rows][n_q_heads · head_dim] f32.
std::int64_t query_width(const KvShape& shape, int n_q_heads) {
  return std::int64_t(n_q_heads) * shape.head_dim;
}

// The partial states of a decode step in one buffer: m and l [n_q_heads][splits], then o
// [n_q_heads][splits][head_dim]. splits is a multiple of 4, so o starts 16-byte aligned.
std::size_t partial_floats(int n_q_heads, int splits, int head_dim) {
  return std::size_t(n_q_heads) * std::size_t(splits) * std::size_t(2 + head_dim);
}

// A decode step's work split and workspace, made for one store at one version: a run at another
// version, or for a layer that holds another number of tokens, is refused.
class GpuDecodePlan final : public DecodePlan {
 public:
  GpuDecodePlan(const GpuKvStore& store, int n_q_heads, const DecodeKernel& kernel,
                const DecodeSplit& split, std::shared_ptr<GpuBuffer> workspace)
      : store_(&store),
        version_(store.version()),
        layer_tokens_(store.n_tokens()),
        n_q_heads_(n_q_heads),
        kernel_(kernel),
        split_(split),
        workspace_(std::move(workspace)) {}

  void check_fits(const GpuKvStore& store, int layer) const {
    check_decode_plan_fits("decode", &store == store_, store.version() != version_, layer_tokens_,
                           layer, store.layer_tokens(layer));
  }

  int n_q_heads() const { return n_q_heads_; }
  const DecodeKernel& kernel() const { return kernel_; }
  const DecodeSplit& split() const { return split_; }

  DecodePartials partials() const {
    auto* m = reinterpret_cast<float*>(workspace_->data());
    const std::size_t states = std::size_t(n_q_heads_) * std::size_t(split_.splits);
    return {m, m + states, m + 2 * states};
  }

 private:
  const GpuKvStore* store_;
  std::uint64_t version_;
  std::int64_t layer_tokens_;
  int n_q_heads_;
  DecodeKernel kernel_;
  DecodeSplit split_;
  std::shared_ptr<GpuBuffer> workspace_;
};

// Tiles of each KV head of `store` as a decode step walks them.
std::int64_t decode_tiles(const GpuKvStore& store) {
  const StoreView view = store.view();
  int segment_tiles[kAllPrecisions.size()];
  for (std::size_t i = 0; i < kAllPrecisions.size(); ++i) {
    segment_tiles[i] = view.segments[i].n_tiles;
  }
  return count_decode_tiles(segment_tiles, store.n_tokens() - store.n_committed(),
                            store.options().layout.group_size);
}

}  // namespace

GpuAttention::GpuAttention(std::shared_ptr<const GpuDevice> device) : device_(std::move(device)) {}

const DecodeKernel& GpuAttention::decode_kernel(int batch_heads, int head_dim) {
  if (batch_heads != prepared_heads_ || head_dim != prepared_dim_) {
    prepared_ = prepare_decode(batch_heads, head_dim, *device_);
    prepared_heads_ = batch_heads;
    prepared_dim_ = head_dim;
  }
  return prepared_;
}

std::shared_ptr<GpuBuffer> GpuAttention::workspace(std::size_t bytes) {
  if (!workspace_ || workspace_->size() < bytes) {
    workspace_ = std::make_shared<GpuBuffer>(bytes, device_->index);
  }
  return workspace_;
}

std::unique_ptr<DecodePlan> GpuAttention::plan_decode(const KvStore& store, int n_q_heads) {
  const GpuKvStore& gpu = gpu_store("plan_decode", store);
  const KvShape& shape = store.options().shape;
  check_query_heads("plan_decode", shape, n_q_heads);
  if (gpu.n_tokens() == 0) throw Error("plan_decode: the KV store is empty");
  use_device(*device_);
  const HeadBatches batches = batch_query_heads(n_q_heads / shape.n_kv_heads);
  const DecodeKernel& kernel = decode_kernel(batches.heads, shape.head_dim);
  const DecodeSplit split =
      split_decode(decode_tiles(gpu), shape.n_kv_heads, batches, kernel.resident_blocks);
  // Sized for the most ranges any store of this shape gets, so that later steps reuse it.
  const DecodeSplit widest = split_decode(std::numeric_limits<int>::max(), shape.n_kv_heads,
                                          batches, kernel.resident_blocks);
  const std::size_t bytes =
      partial_floats(n_q_heads, widest.splits, shape.head_dim) * sizeof(float);
  return std::make_unique<GpuDecodePlan>(gpu, n_q_heads, kernel, split, workspace(bytes));
}

void GpuAttention::decode(Stream& stream, DecodePlan& plan, const KvStore& store, int layer,
                          const Tensor& q, float softmax_scale, const Tensor& out) {
  auto* mine = dynamic_cast<GpuDecodePlan*>(&plan);
  if (mine == nullptr) {
    throw Error("decode: the decode plan was made by another backend's plan_decode");
  }
  const GpuKvStore& gpu = gpu_store("decode", store);
  const KvShape& shape = store.options().shape;
  check_layer("decode", shape, layer);
  mine->check_fits(gpu, layer);
  const std::int64_t width = query_width(shape, mine->n_q_heads());
  expect_tensor("decode", "q", q, ElementType::f32, 1, width);
  expect_tensor("decode", "out", out, ElementType::f32, 1, width);
  use_device(*device_);
  const cudaStream_t native = native_stream("decode", stream);

  DecodeParams params;
  params.view = gpu.view();
  params.layer = layer;
  params.tile_tokens = store.options().layout.group_size;
  params.tail_rows = gpu.layer_tokens(layer) - gpu.n_committed();
  params.q = device_pointer<const float>("decode", "q", q);
  params.scale = softmax_scale * kLog2e;
  params.group = mine->n_q_heads() / shape.n_kv_heads;
  params.batch_heads = mine->split().batches.heads;
  params.tiles = mine->split().tiles;
  params.splits = mine->split().splits;
  params.partials = mine->partials();
  float* output = device_pointer<float>("decode", "out", out);
  launch_decode(mine->kernel(), mine->split(), shape.n_kv_heads, params, native);
  launch_merge(params.partials, mine->n_q_heads(), params.splits, shape.head_dim, output, native);
}

void GpuAttention::prefill(Stream& stream, const KvStore& store, int layer, const Tensor& q,
                           int n_q_heads, float softmax_scale, const Tensor& out) {
  const GpuKvStore& gpu = gpu_store("prefill", store);
  const KvShape& shape = store.options().shape;
  check_layer("prefill", shape, layer);
  check_query_heads("prefill", shape, n_q_heads);
  const std::int64_t width = query_width(shape, n_q_heads);
  expect_tensor("prefill", "q", q, ElementType::f32, q.rows, width);
  expect_tensor("prefill", "out", out, ElementType::f32, q.rows, width);
  const std::int64_t tail_rows = gpu.layer_tokens(layer) - gpu.n_committed();
  check_prefill_tokens("prefill", layer, q.rows, tail_rows);
  if (q.rows == 0) return;
  use_device(*device_);
  const cudaStream_t native = native_stream("prefill", stream);

  PrefillParams params;
  params.view = gpu.view();
  params.layer = layer;
  params.tile_tokens = store.options().layout.group_size;
  params.tail_rows = tail_rows;
  params.q = device_pointer<const float>("prefill", "q", q);
  params.out = device_pointer<float>("prefill", "out", out);
  params.n_new = q.rows;
  params.group = n_q_heads / shape.n_kv_heads;
  params.scale = softmax_scale * kLog2e;
  launch_prefill(params, *device_, native);
}

void GpuAttention::attention_mass(Stream& stream, const KvStore& store, int layer, const Tensor& q,
                                  int n_q_heads, float softmax_scale, const Tensor& mass) {
  const GpuKvStore& gpu = gpu_store("attention_mass", store);
  const KvShape& shape = store.options().shape;
  check_layer("attention_mass", shape, layer);
  check_query_heads("attention_mass", shape, n_q_heads);
  const std::int64_t n_tokens = gpu.layer_tokens(layer);
  check_attention_mass("attention_mass", gpu.n_committed(), q.rows, n_tokens);
  expect_tensor("attention_mass", "q", q, ElementType::f32, q.rows, query_width(shape, n_q_heads));
  expect_tensor("attention_mass", "mass", mass, ElementType::f32, n_q_heads, n_tokens);
  use_device(*device_);
  const cudaStream_t native = native_stream("attention_mass", stream);

  MassParams params;
  params.tail = gpu.view().tail;
  params.layer = layer;
  params.n_kv_heads = shape.n_kv_heads;
  params.head_dim = shape.head_dim;
  params.n_tokens = n_tokens;
  params.q = device_pointer<const float>("attention_mass", "q", q);
  params.n_query = q.rows;
  params.n_q_heads = n_q_heads;
  params.group = n_q_heads / shape.n_kv_heads;
  params.scale = softmax_scale * kLog2e;
  params.mass = device_pointer<float>("attention_mass", "mass", mass);
  launch_attention_mass(params, native);
}

}  // namespace cocktail::gpu
