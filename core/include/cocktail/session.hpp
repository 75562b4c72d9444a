#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cocktail/attention_executor.hpp"
#include "cocktail/backend.hpp"
#include "cocktail/chunk_planner.hpp"
#include "cocktail/chunk_scorer.hpp"
#include "cocktail/kv_store.hpp"

namespace cocktail {

// One sequence on the Cocktail cache, for a host that runs its own transformer:
//   1. prefill: for each layer, append() the context + query K/V and call prefill_attention();
//   2. plan_and_commit(context token texts, query): score, plan, reorder + quantize;
//   3. decode: for each layer, append() the new token's K/V and call decode_attention().
// The cache lives on the backend's device and the session's work goes to its own stream
// (stream()): a host that runs its transformer on the same backend enqueues there too, hands
// over its tensors, and reads back what it needs. The host-span forms are a convenience that
// copies through device memory and waits for the result.
class Session {
 public:
  Session(std::shared_ptr<Backend> backend, std::shared_ptr<KvStore> store,
          std::shared_ptr<AttentionExecutor> attention, std::shared_ptr<ChunkPlanner> planner,
          std::shared_ptr<ChunkScorer> scorer);

  // The sequence's queue of work on the device.
  Stream& stream() const { return *stream_; }
  // From now on, enqueue on the host's own queue (Backend::wrap_stream) instead of the
  // session's, so that the session's work runs in order with the host's.
  void use_stream(std::shared_ptr<Stream> stream);
  Backend& backend() const { return *backend_; }

  // k and v: f32 device tensors [n_tokens][n_kv_heads · head_dim].
  void append(int layer, const Tensor& k, const Tensor& v);
  // q and out: f32 [n_new][n_q_heads · head_dim], the last n_new appended tokens.
  void prefill_attention(int layer, const Tensor& q, int n_q_heads, const Tensor& out);
  // After prefill, before plan_and_commit: the attention the last q.rows tokens give every
  // token of `layer`, per query head, into mass [n_q_heads][n_tokens]
  // (AttentionExecutor::attention_mass).
  void attention_mass(int layer, const Tensor& q, int n_q_heads, const Tensor& mass) const;
  // q and out: f32 [1][n_q_heads · head_dim]. The step's attention is planned at its first
  // layer and that plan runs every layer.
  void decode_attention(int layer, const Tensor& q, int n_q_heads, const Tensor& out);

  // The same on host memory: k, v, q, out and mass as above, row-major float spans.
  void append(int layer, std::span<const float> k, std::span<const float> v, std::int64_t n_tokens);
  void prefill_attention(int layer, std::span<const float> q, std::int64_t n_new, int n_q_heads,
                         std::span<float> out);
  void attention_mass(int layer, std::span<const float> q, std::int64_t n_query, int n_q_heads,
                      std::span<float> mass) const;
  void decode_attention(int layer, std::span<const float> q, int n_q_heads, std::span<float> out);

  // Plans the first `context_texts.size()` tokens (the context) and commits the plan; the
  // query tokens after them stay in the FP16 tail. `query_attention` is what the host collected
  // for a scorer that asked for it (ChunkScorer::query_attention_layers), else null.
  const Plan& plan_and_commit(std::span<const std::string> context_texts, std::string_view query,
                              const QueryAttention* query_attention = nullptr);

  const KvStore& store() const { return *store_; }
  // An independent copy to go on from (the store cloned, a stream of its own; planner, scorer
  // and plan state shared): an evaluation decodes two ways from one committed cache.
  Session fork() const;
  float softmax_scale() const;

 private:
  void age_if_planner_wants();
  void commit(const Plan& plan);
  PlanInput plan_input(const QueryAttention* query_attention) const;

  std::shared_ptr<Backend> backend_;
  std::shared_ptr<Stream> stream_;
  std::shared_ptr<KvStore> store_;
  std::shared_ptr<AttentionExecutor> attention_;
  std::shared_ptr<ChunkPlanner> planner_;
  std::shared_ptr<ChunkScorer> scorer_;
  std::vector<std::string> context_texts_;
  std::string query_;
  bool planned_ = false;
  // The decode plan of the current step: for the store's token count and query heads it was
  // made with; any other count (the next step, a commit) plans again.
  std::unique_ptr<DecodePlan> decode_plan_;
  std::int64_t decode_plan_tokens_ = -1;
  int decode_plan_heads_ = 0;
};

}  // namespace cocktail
