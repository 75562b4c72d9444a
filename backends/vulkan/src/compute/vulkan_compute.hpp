#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "cocktail/compute.hpp"
#include "compute/vulkan_weights.hpp"
#include "memory/vulkan_buffer.hpp"
#include "runtime/device.hpp"

namespace cocktail::vulkan {

// The Vulkan backend's dense operations: each call checks its operands by the rules every
// Compute shares (compute_checks.hpp) and binds them (kernel_operand), then enqueues its kernel
// (shaders/*.comp) on the stream.
// Weights keep their file's values (upload, gpu_common/weight_layout.hpp), decoded in the
// kernels, whose arithmetic is float32. matmul runs a GEMV for up to kGemvTokens tokens (decode),
// which reads every weight once for all of them, and a tiled GEMM through shared memory for
// more (prefill).
class VulkanCompute final : public Compute {
 public:
  explicit VulkanCompute(std::shared_ptr<const Device> device) : device_(std::move(device)) {}

  std::string_view name() const override { return "vulkan"; }
  // Converts w to the device layout on the host and copies it to the device, waiting for the
  // copy: the result does not read w.data.
  std::unique_ptr<Weights> upload(const WeightView& w) override;

  void matmul(Stream& stream, const Weights& w, const Tensor& x, const Tensor& y) override;
  void embedding(Stream& stream, const Weights& table, const Tensor& ids,
                 const Tensor& out) override;
  void rms_norm(Stream& stream, const Tensor& x, const Tensor& weight, float eps,
                const Tensor& out) override;
  void rope(Stream& stream, const Tensor& x, const Tensor& positions, int n_heads, int head_dim,
            float base, RopeStyle style) override;
  void silu_mul(Stream& stream, const Tensor& gate, const Tensor& up) override;
  void add(Stream& stream, const Tensor& x, const Tensor& y) override;
  void layer_norm(Stream& stream, const Tensor& x, const Tensor& weight, const Tensor& bias,
                  float eps, const Tensor& out) override;
  void gelu(Stream& stream, const Tensor& x) override;
  void add_bias(Stream& stream, const Tensor& x, const Tensor& bias) override;
  void encoder_attention(Stream& stream, const Tensor& q, const Tensor& k, const Tensor& v,
                         std::span<const std::int64_t> lengths, int n_heads, int head_dim,
                         float scale, const Tensor& out) override;

 private:
  // A rope call's frequencies base^(-2i / head_dim), computed on the host in double precision.
  struct Frequencies {
    std::unique_ptr<VulkanBuffer> memory;
    Tensor tensor;
  };

  // w as this Compute's own upload; an Error naming `op` when another Compute made it.
  const VulkanWeights& own(const char* op, const Weights& w) const;
  // The frequency table of (head_dim, base), uploaded (and waited for) at its first use.
  const Tensor& frequencies(int head_dim, float base);
  // Workgroups for a kernel whose invocations stride over `items` (one each).
  std::uint32_t strided_groups(std::int64_t items) const;
  // Workgroups for a kernel whose subgroups stride over `items` (one each, subgroup.glsl).
  std::uint32_t subgroup_groups(std::int64_t items) const;

  std::shared_ptr<const Device> device_;
  std::mutex frequencies_mutex_;
  std::map<std::pair<int, float>, Frequencies> frequencies_;
};

}  // namespace cocktail::vulkan
