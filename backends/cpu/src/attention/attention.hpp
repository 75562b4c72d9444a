#pragma once

#include "cocktail/attention_executor.hpp"

namespace cocktail::cpu {

// Decode and prefill attention over a CpuKvStore. Work is split across threads over KV heads
// and, when heads are fewer than threads, over ranges of tiles; partial softmax states are
// merged by log-sum-exp.
class CpuAttention final : public AttentionExecutor {
 public:
  explicit CpuAttention(int threads) : threads_(threads) {}

  void decode(const KvStore& store, int layer, std::span<const float> q, int n_q_heads,
              float softmax_scale, std::span<float> out) override;
  void prefill(const KvStore& store, int layer, std::span<const float> q, std::int64_t n_new,
               int n_q_heads, float softmax_scale, std::span<float> out) override;
  void attention_mass(const KvStore& store, int layer, std::span<const float> q,
                      std::int64_t n_query, int n_q_heads, float softmax_scale,
                      std::span<float> mass) override;

 private:
  int threads_;
};

}  // namespace cocktail::cpu
