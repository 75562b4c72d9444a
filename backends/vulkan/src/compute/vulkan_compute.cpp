#include "compute/vulkan_compute.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

#include "cocktail/compute_checks.hpp"
#include "cocktail/error.hpp"
#include "compute/kernels.hpp"
#include "memory/vulkan_stream.hpp"

namespace cocktail::vulkan {

namespace {

// Element counts and offsets as push constants take them. Every operand fits one storage
// binding (kernel_operand checks it), so its counts fit 32 bits.
std::uint32_t u32(std::int64_t n) {
  return std::uint32_t(n);
}

template <class Push>
void run(VulkanStream& stream, const Kernel& kernel, std::initializer_list<BufferRange> buffers,
         const Push& push, std::array<std::uint32_t, 2> groups) {
  stream.dispatch(kernel, std::span(buffers.begin(), buffers.size()),
                  std::as_bytes(std::span(&push, 1)), groups);
}

std::uint32_t ceil_div(std::int64_t n, std::int64_t d) {
  return u32((n + d - 1) / d);
}

// An Error naming `op` when `count` workgroups along one axis are more than one dispatch of the
// device runs.
void expect_groups(const char* op, const char* what, std::int64_t count, const Device& device) {
  if (count > std::int64_t(device.limits().max_groups)) {
    throw Error(std::string(op) + ": " + std::to_string(count) + " " + what +
                " need as many workgroups, more than one dispatch of " + device.name() +
                " runs (maxComputeWorkGroupCount, " + std::to_string(device.limits().max_groups) +
                ")");
  }
}

}  // namespace

std::unique_ptr<Weights> VulkanCompute::upload(const WeightView& w) {
  // A slab's rows fit one dispatch of the tiled matmul, whose workgroups take a tile of rows.
  return upload_weights(device_, w, std::int64_t(device_->limits().max_groups) * kTileRows, this);
}

const VulkanWeights& VulkanCompute::own(const char* op, const Weights& w) const {
  const auto* mine = dynamic_cast<const VulkanWeights*>(&w);
  if (mine == nullptr || mine->maker() != this) {
    throw Error(std::string(op) + ": the " + std::to_string(w.rows()) + " x " +
                std::to_string(w.cols()) +
                " weights were uploaded by another Compute; upload them with this one");
  }
  return *mine;
}

std::uint32_t VulkanCompute::subgroup_groups(std::int64_t items) const {
  const std::int64_t per_group =
      std::max<std::uint32_t>(kWorkgroup / device_->limits().subgroup_size, 1);
  return u32(std::clamp<std::int64_t>((items + per_group - 1) / per_group, 1,
                                      device_->limits().max_groups));
}

std::uint32_t VulkanCompute::strided_groups(std::int64_t items) const {
  return u32(std::clamp<std::int64_t>((items + kWorkgroup - 1) / kWorkgroup, 1,
                                      device_->limits().max_groups));
}

void VulkanCompute::matmul(Stream& s, const Weights& w, const Tensor& x, const Tensor& y) {
  const VulkanWeights& weights = own("matmul", w);
  check_matmul("matmul", w, x, y);
  VulkanStream& stream = vulkan_stream("matmul", s, *device_);
  const KernelOperand xo = kernel_operand("matmul", "x", x, *device_);
  const KernelOperand yo = kernel_operand("matmul", "y", y, *device_);
  const bool gemv = x.rows <= kGemvTokens;
  // The tiled kernel takes tokens in runs of as many tiles as one dispatch has workgroups.
  const std::int64_t run_tokens =
      gemv ? kGemvTokens : std::int64_t(device_->limits().max_groups) * kTileTokens;
  for (std::int64_t first = 0; first < x.rows; first += run_tokens) {
    const std::int64_t n = std::min(run_tokens, x.rows - first);
    for (const VulkanWeights::Slab& slab : weights.slabs()) {
      const MatmulPush push{u32(n),
                            u32(w.cols()),
                            u32(slab.rows),
                            weights.units_per_row(),
                            u32(xo.first + first * w.cols()),
                            u32(yo.first + first * w.rows()),
                            u32(w.rows()),
                            u32(slab.first_row),
                            std::uint32_t(weights.format()),
                            weights.groups_first(slab)};
      const std::initializer_list<BufferRange> buffers = {weights.range(slab), xo.binding,
                                                          yo.binding};
      if (gemv) {
        run(stream, kMatmulGemv, buffers, push, {subgroup_groups(slab.rows), 1});
      } else {
        run(stream, kMatmulTiled, buffers, push,
            {ceil_div(slab.rows, kTileRows), ceil_div(n, kTileTokens)});
      }
    }
  }
}

void VulkanCompute::embedding(Stream& s, const Weights& table, const Tensor& ids,
                              const Tensor& out) {
  const VulkanWeights& weights = own("embedding", table);
  check_embedding(table, ids, out);
  VulkanStream& stream = vulkan_stream("embedding", s, *device_);
  const KernelOperand ids_operand = kernel_operand("embedding", "ids", ids, *device_);
  const KernelOperand out_operand = kernel_operand("embedding", "out", out, *device_);
  if (ids.rows == 0) return;
  const BufferRange report = stream.index_report("embedding: id");
  const std::uint32_t groups = u32(std::min<std::int64_t>(ids.rows, device_->limits().max_groups));
  for (const VulkanWeights::Slab& slab : weights.slabs()) {
    const EmbeddingPush push{u32(ids.rows),
                             u32(table.cols()),
                             weights.units_per_row(),
                             u32(table.rows()),
                             u32(slab.first_row),
                             u32(slab.rows),
                             ids_operand.first,
                             out_operand.first,
                             std::uint32_t(weights.format()),
                             weights.groups_first(slab)};
    run(stream, kEmbedding, {weights.range(slab), ids_operand.binding, out_operand.binding, report},
        push, {groups, 1});
  }
}

void VulkanCompute::rms_norm(Stream& s, const Tensor& x, const Tensor& weight, float eps,
                             const Tensor& out) {
  check_rms_norm(x, weight, out);
  VulkanStream& stream = vulkan_stream("rms_norm", s, *device_);
  const KernelOperand xo = kernel_operand("rms_norm", "x", x, *device_);
  const KernelOperand wo = kernel_operand("rms_norm", "weight", weight, *device_);
  const KernelOperand oo = kernel_operand("rms_norm", "out", out, *device_);
  if (x.elements() == 0) return;
  const RmsNormPush push{u32(x.rows), u32(x.cols), xo.first, wo.first, oo.first, eps};
  run(stream, kRmsNorm, {xo.binding, wo.binding, oo.binding}, push, {subgroup_groups(x.rows), 1});
}

void VulkanCompute::layer_norm(Stream& s, const Tensor& x, const Tensor& weight, const Tensor& bias,
                               float eps, const Tensor& out) {
  check_layer_norm(x, weight, bias, out);
  VulkanStream& stream = vulkan_stream("layer_norm", s, *device_);
  const KernelOperand xo = kernel_operand("layer_norm", "x", x, *device_);
  const KernelOperand wo = kernel_operand("layer_norm", "weight", weight, *device_);
  const KernelOperand bo = kernel_operand("layer_norm", "bias", bias, *device_);
  const KernelOperand oo = kernel_operand("layer_norm", "out", out, *device_);
  if (x.elements() == 0) return;
  const LayerNormPush push{u32(x.rows), u32(x.cols), xo.first, wo.first, bo.first, oo.first, eps};
  run(stream, kLayerNorm, {xo.binding, wo.binding, bo.binding, oo.binding}, push,
      {subgroup_groups(x.rows), 1});
}

const Tensor& VulkanCompute::frequencies(int head_dim, float base) {
  const std::lock_guard lock(frequencies_mutex_);
  Frequencies& table = frequencies_[{head_dim, base}];
  if (!table.memory) {
    std::vector<float> host(std::size_t(head_dim / 2));
    for (std::size_t i = 0; i < host.size(); ++i) {
      host[i] = float(std::pow(double(base), -2.0 * double(i) / head_dim));
    }
    auto memory = std::make_unique<VulkanBuffer>(device_, host.size() * sizeof(float));
    const Tensor tensor{memory.get(), 0, ElementType::f32, 1, std::int64_t(host.size())};
    // Its own stream, waited for: the table may be used next on any stream.
    VulkanStream stream(device_);
    cocktail::upload(stream, std::span<const float>(host), tensor);
    stream.synchronize();
    table = {std::move(memory), tensor};
  }
  return table.tensor;
}

void VulkanCompute::rope(Stream& s, const Tensor& x, const Tensor& positions, int n_heads,
                         int head_dim, float base, RopeStyle style) {
  check_rope(x, positions, n_heads, head_dim, base);
  VulkanStream& stream = vulkan_stream("rope", s, *device_);
  const KernelOperand xo = kernel_operand("rope", "x", x, *device_);
  const KernelOperand po = kernel_operand("rope", "positions", positions, *device_);
  if (x.rows == 0) return;
  const KernelOperand fo =
      kernel_operand("rope", "frequencies", frequencies(head_dim, base), *device_);
  const std::int64_t pairs = x.elements() / 2;
  const RopePush push{u32(pairs),
                      u32(head_dim / 2),
                      u32(x.cols / 2),
                      xo.first,
                      po.first,
                      fo.first,
                      style == RopeStyle::halves ? 1u : 0u};
  run(stream, kRope, {xo.binding, po.binding, fo.binding}, push, {strided_groups(pairs), 1});
}

void VulkanCompute::silu_mul(Stream& s, const Tensor& gate, const Tensor& up) {
  expect_tensor("silu_mul", "gate", gate, ElementType::f32, gate.rows, gate.cols);
  check_same_shape("silu_mul", "up", up, gate);
  VulkanStream& stream = vulkan_stream("silu_mul", s, *device_);
  const KernelOperand go = kernel_operand("silu_mul", "gate", gate, *device_);
  const KernelOperand uo = kernel_operand("silu_mul", "up", up, *device_);
  if (gate.elements() == 0) return;
  const PairPush push{u32(gate.elements()), go.first, uo.first};
  run(stream, kSiluMul, {go.binding, uo.binding}, push, {strided_groups(gate.elements()), 1});
}

void VulkanCompute::add(Stream& s, const Tensor& x, const Tensor& y) {
  expect_tensor("add", "x", x, ElementType::f32, x.rows, x.cols);
  check_same_shape("add", "y", y, x);
  VulkanStream& stream = vulkan_stream("add", s, *device_);
  const KernelOperand xo = kernel_operand("add", "x", x, *device_);
  const KernelOperand yo = kernel_operand("add", "y", y, *device_);
  if (x.elements() == 0) return;
  const PairPush push{u32(x.elements()), xo.first, yo.first};
  run(stream, kAdd, {xo.binding, yo.binding}, push, {strided_groups(x.elements()), 1});
}

void VulkanCompute::gelu(Stream& s, const Tensor& x) {
  expect_tensor("gelu", "x", x, ElementType::f32, x.rows, x.cols);
  VulkanStream& stream = vulkan_stream("gelu", s, *device_);
  const KernelOperand xo = kernel_operand("gelu", "x", x, *device_);
  if (x.elements() == 0) return;
  const GeluPush push{u32(x.elements()), xo.first};
  run(stream, kGelu, {xo.binding}, push, {strided_groups(x.elements()), 1});
}

void VulkanCompute::add_bias(Stream& s, const Tensor& x, const Tensor& bias) {
  check_add_bias(x, bias);
  VulkanStream& stream = vulkan_stream("add_bias", s, *device_);
  const KernelOperand xo = kernel_operand("add_bias", "x", x, *device_);
  const KernelOperand bo = kernel_operand("add_bias", "bias", bias, *device_);
  if (x.elements() == 0) return;
  const AddBiasPush push{u32(x.elements()), u32(x.cols), xo.first, bo.first};
  run(stream, kAddBias, {xo.binding, bo.binding}, push, {strided_groups(x.elements()), 1});
}

void VulkanCompute::encoder_attention(Stream& s, const Tensor& q, const Tensor& k, const Tensor& v,
                                      std::span<const std::int64_t> lengths, int n_heads,
                                      int head_dim, float scale, const Tensor& out) {
  const char* op = "encoder_attention";
  check_encoder_attention(q, k, v, lengths, n_heads, head_dim, out);
  if (head_dim > kMaxEncoderHeadDim) {
    throw Error(std::string(op) + ": head_dim " + std::to_string(head_dim) +
                " is more than the Vulkan kernel's " + std::to_string(kMaxEncoderHeadDim));
  }
  expect_groups(op, "heads", n_heads, *device_);
  for (const std::int64_t length : lengths) {
    expect_groups(op, "tokens of one sequence", length, *device_);
  }
  const std::int64_t width = std::int64_t(n_heads) * head_dim;
  VulkanStream& stream = vulkan_stream(op, s, *device_);
  const KernelOperand qo = kernel_operand(op, "q", q, *device_);
  const KernelOperand ko = kernel_operand(op, "k", k, *device_);
  const KernelOperand vo = kernel_operand(op, "v", v, *device_);
  const KernelOperand oo = kernel_operand(op, "out", out, *device_);
  std::int64_t start = 0;
  for (const std::int64_t length : lengths) {
    const EncoderAttentionPush push{u32(start), u32(length), u32(head_dim), u32(width), qo.first,
                                    ko.first,   vo.first,    oo.first,      scale};
    run(stream, kEncoderAttention, {qo.binding, ko.binding, vo.binding, oo.binding}, push,
        {u32(length), u32(n_heads)});
    start += length;
  }
}

}  // namespace cocktail::vulkan
