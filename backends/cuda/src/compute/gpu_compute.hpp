#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "cocktail/compute.hpp"
#include "runtime/gpu_device.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

class GpuWeights;

// The dense operations of the Llama and BERT forwards on one GPU, one launch each, in float32
// arithmetic. Weights keep their file's values on the device (gpu_common/weight_layout.hpp: float
// rows as they are, quantized ones as integer codes with a float scale and offset per group);
// activations are f32. Operands are checked (cocktail/compute_checks.hpp) before anything is
// enqueued; nothing is allocated or waited for after upload, so a decode step can be captured
// in a graph.
class GpuCompute final : public Compute {
 public:
  explicit GpuCompute(std::shared_ptr<const GpuDevice> device);

  std::string_view name() const override { return kBackendName; }
  std::unique_ptr<Weights> upload(const WeightView& w) override;
  void matmul(Stream& stream, const Weights& w, const Tensor& x, const Tensor& y) override;
  void matmul_shared_input(Stream& stream, const Tensor& x,
                           std::span<const MatmulOutput> outputs) override;
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
  // w as this Compute's own upload; an Error naming `op` when another Compute made it.
  const GpuWeights& own(const char* op, const Weights& w) const;

  std::shared_ptr<const GpuDevice> device_;
};

}  // namespace cocktail::gpu
