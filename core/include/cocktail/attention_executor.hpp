#pragma once

#include <cstdint>
#include <span>

#include "cocktail/kv_store.hpp"

namespace cocktail {

// Attention over a KvStore. Query heads are grouped by KV head (GQA): with n_q_heads =
// g · n_kv_heads, query head h reads KV head h / g.
class AttentionExecutor {
 public:
  virtual ~AttentionExecutor() = default;

  // One query token at the end of the sequence attends to every stored token of `layer`.
  // q and out are [n_q_heads][head_dim]; one softmax over all segments and the tail.
  virtual void decode(const KvStore& store, int layer, std::span<const float> q, int n_q_heads,
                      float softmax_scale, std::span<float> out) = 0;

  // Causal attention for the last `n_new` tokens of the store (already appended, not yet
  // committed): query i sits at position n_tokens - n_new + i and sees positions up to it.
  // q and out are [n_new][n_q_heads][head_dim]. Full precision.
  virtual void prefill(const KvStore& store, int layer, std::span<const float> q,
                       std::int64_t n_new, int n_q_heads, float softmax_scale,
                       std::span<float> out) = 0;
  // How much the last `n_query` tokens attend to each token: for every query head, the softmax
  // weights of those queries (causal, full precision) summed over them. For scorers that rank
  // chunks by the query's attention; runs after prefill and before any commit. q is
  // [n_query][n_q_heads][head_dim]; mass is [n_q_heads][tokens of the layer].
  virtual void attention_mass(const KvStore& store, int layer, std::span<const float> q,
                              std::int64_t n_query, int n_q_heads, float softmax_scale,
                              std::span<float> mass) = 0;
};

}  // namespace cocktail
