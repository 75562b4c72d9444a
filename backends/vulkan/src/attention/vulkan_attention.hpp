#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "cocktail/attention_executor.hpp"
#include "memory/vulkan_buffer.hpp"
#include "runtime/device.hpp"

namespace cocktail::vulkan {

// Attention over a VulkanKvStore: decode over the mixed segments and the tail in one dispatch
// split along the tokens, merged by log-sum-exp; tiled causal prefill; attention mass.
class VulkanAttention final : public AttentionExecutor {
 public:
  explicit VulkanAttention(std::shared_ptr<const Device> device) : device_(std::move(device)) {}

  std::unique_ptr<DecodePlan> plan_decode(const KvStore& store, int n_q_heads) override;
  void decode(Stream& stream, DecodePlan& plan, const KvStore& store, int layer, const Tensor& q,
              float softmax_scale, const Tensor& out) override;
  void prefill(Stream& stream, const KvStore& store, int layer, const Tensor& q, int n_q_heads,
               float softmax_scale, const Tensor& out) override;
  void attention_mass(Stream& stream, const KvStore& store, int layer, const Tensor& q,
                      int n_q_heads, float softmax_scale, const Tensor& mass) override;

 private:
  // The attention mass's per-query softmax statistics: at least `bytes`, grown as needed. A
  // buffer that work already enqueued may still read is kept, not freed, until this executor
  // goes.
  const VulkanBuffer& mass_stats(std::size_t bytes);

  std::shared_ptr<const Device> device_;
  std::mutex stats_mutex_;
  std::vector<std::unique_ptr<VulkanBuffer>> stats_;  // the last is the one in use
};

}  // namespace cocktail::vulkan
