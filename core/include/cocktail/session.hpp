#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cocktail/attention_executor.hpp"
#include "cocktail/chunk_planner.hpp"
#include "cocktail/chunk_scorer.hpp"
#include "cocktail/kv_store.hpp"

namespace cocktail {

// One sequence on the Cocktail cache, for a host that runs its own transformer:
//   1. prefill: for each layer, append() the context + query K/V and call prefill_attention();
//   2. plan_and_commit(context token texts, query): score, plan, reorder + quantize;
//   3. decode: for each layer, append() the new token's K/V and call decode_attention().
class Session {
 public:
  Session(std::shared_ptr<KvStore> store, std::shared_ptr<AttentionExecutor> attention,
          std::shared_ptr<ChunkPlanner> planner, std::shared_ptr<ChunkScorer> scorer);

  void append(int layer, std::span<const float> k, std::span<const float> v, std::int64_t n_tokens);
  void prefill_attention(int layer, std::span<const float> q, std::int64_t n_new, int n_q_heads,
                         std::span<float> out);
  // After prefill, before plan_and_commit: the attention the last n_query tokens give every
  // token of `layer`, per query head (AttentionExecutor::attention_mass).
  void attention_mass(int layer, std::span<const float> q, std::int64_t n_query, int n_q_heads,
                      std::span<float> mass) const;
  // Plans the first `context_texts.size()` tokens (the context) and commits the plan; the
  // query tokens after them stay in the FP16 tail. `query_attention` is what the host collected
  // for a scorer that asked for it (ChunkScorer::query_attention_layers), else null.
  const Plan& plan_and_commit(std::span<const std::string> context_texts, std::string_view query,
                              const QueryAttention* query_attention = nullptr);
  void decode_attention(int layer, std::span<const float> q, int n_q_heads, std::span<float> out);

  const KvStore& store() const { return *store_; }
  // An independent copy to go on from (the store cloned; planner, scorer and plan state shared):
  // an evaluation decodes two ways from one committed cache.
  Session fork() const;
  float softmax_scale() const;

 private:
  void age_if_planner_wants();
  PlanInput plan_input(const QueryAttention* query_attention) const;

  std::shared_ptr<KvStore> store_;
  std::shared_ptr<AttentionExecutor> attention_;
  std::shared_ptr<ChunkPlanner> planner_;
  std::shared_ptr<ChunkScorer> scorer_;
  std::vector<std::string> context_texts_;
  std::string query_;
  bool planned_ = false;
};

}  // namespace cocktail
