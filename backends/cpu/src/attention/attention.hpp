#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "attention/tile_kernels.hpp"
#include "cocktail/attention_executor.hpp"
#include "kv_store.hpp"

namespace cocktail::cpu {

// Partial softmax states of the query heads of one KV head over one range of its tiles.
struct Partial {
  std::vector<float> m, l, o;
  Partial(int heads, int dim);
  void reset();  // m = -inf, l = 0, o = 0
};

// A decode step cut into range tasks: each KV head's tiles split into enough ranges to keep
// every thread busy (never so short that merging costs more than it saves), with the scaled
// query, the head views and the partial states the tasks point into, all allocated here.
class CpuDecodePlan final : public DecodePlan {
 public:
  CpuDecodePlan(const CpuKvStore& store, int query_heads, int n_threads);
  // The tasks point into the plan's own vectors.
  CpuDecodePlan(const CpuDecodePlan&) = delete;
  CpuDecodePlan& operator=(const CpuDecodePlan&) = delete;

  // Throws Error unless the plan was made for this store's current layout and `layer` holds
  // the tokens it was made for.
  void check_fits(const CpuKvStore& store, int layer) const;

  int n_q_heads;
  int threads;
  std::vector<float> scaled_q;                 // [n_q_heads][head_dim]
  std::vector<HeadView> views;                 // per KV head, refilled for each layer
  std::vector<std::vector<Partial>> partials;  // [KV head][range]
  std::vector<RangeTask> tasks;                // per KV head, its ranges in order

 private:
  const CpuKvStore* store_;
  std::int64_t layer_tokens_;
  std::uint64_t commits_;
};

// Decode and prefill attention over a CpuKvStore. Work is split across threads over KV heads
// and, when heads are fewer than threads, over ranges of tiles; partial softmax states are
// merged by log-sum-exp. The AttentionExecutor calls resolve their tensors to the host memory
// of CPU buffers and run the host forms below, which the CPU tests call directly.
class CpuAttention final : public AttentionExecutor {
 public:
  explicit CpuAttention(int threads) : threads_(threads) {}

  std::unique_ptr<DecodePlan> plan_decode(const KvStore& store, int n_q_heads) override;
  void decode(Stream& stream, DecodePlan& plan, const KvStore& store, int layer, const Tensor& q,
              float softmax_scale, const Tensor& out) override;
  void prefill(Stream& stream, const KvStore& store, int layer, const Tensor& q, int n_q_heads,
               float softmax_scale, const Tensor& out) override;
  void attention_mass(Stream& stream, const KvStore& store, int layer, const Tensor& q,
                      int n_q_heads, float softmax_scale, const Tensor& mass) override;

  // Host forms: q, out and mass are row-major float spans.
  void decode(CpuDecodePlan& plan, const CpuKvStore& store, int layer, std::span<const float> q,
              float softmax_scale, std::span<float> out) const;
  // Plans and runs one decode: what a step does for a single layer.
  void decode(const CpuKvStore& store, int layer, std::span<const float> q, int n_q_heads,
              float softmax_scale, std::span<float> out) const;
  void prefill(const CpuKvStore& store, int layer, std::span<const float> q, std::int64_t n_new,
               int n_q_heads, float softmax_scale, std::span<float> out) const;
  void attention_mass(const CpuKvStore& store, int layer, std::span<const float> q,
                      std::int64_t n_query, int n_q_heads, float softmax_scale,
                      std::span<float> mass) const;

 private:
  int threads_;
};

}  // namespace cocktail::cpu
