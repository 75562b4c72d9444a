#pragma once

#include <cstddef>
#include <memory>

#include "attention/attention_kernels.hpp"
#include "cocktail/attention_executor.hpp"
#include "runtime/gpu_buffer.hpp"
#include "runtime/gpu_device.hpp"

namespace cocktail::gpu {

// Attention over a GpuKvStore: decode over the mixed segments and the tail in one launch split
// along the tokens, merged by log-sum-exp; tiled causal prefill; attention mass.
class GpuAttention final : public AttentionExecutor {
 public:
  explicit GpuAttention(std::shared_ptr<const GpuDevice> device);

  std::unique_ptr<DecodePlan> plan_decode(const KvStore& store, int n_q_heads) override;
  void decode(Stream& stream, DecodePlan& plan, const KvStore& store, int layer, const Tensor& q,
              float softmax_scale, const Tensor& out) override;
  void prefill(Stream& stream, const KvStore& store, int layer, const Tensor& q, int n_q_heads,
               float softmax_scale, const Tensor& out) override;
  void attention_mass(Stream& stream, const KvStore& store, int layer, const Tensor& q,
                      int n_q_heads, float softmax_scale, const Tensor& mass) override;

 private:
  // The decode kernel for batches of batch_heads heads of head_dim channels, prepared once.
  const DecodeKernel& decode_kernel(int batch_heads, int head_dim);
  // A workspace of at least `bytes`, shared by this executor's plans: a step's plan allocates
  // (and the last one frees) nothing once the first has sized it, so no step waits on a free.
  // Plans of one executor run on its session's one stream, in order, so they never overlap.
  std::shared_ptr<GpuBuffer> workspace(std::size_t bytes);

  std::shared_ptr<const GpuDevice> device_;
  int prepared_heads_ = 0;
  int prepared_dim_ = 0;
  DecodeKernel prepared_;
  std::shared_ptr<GpuBuffer> workspace_;
};

}  // namespace cocktail::gpu
