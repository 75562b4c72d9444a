#pragma once

#include <cstdint>
#include <memory>

#include "cocktail/kv_store.hpp"
#include "cocktail/stream.hpp"
#include "cocktail/tensor.hpp"

namespace cocktail {

// How one decode step's attention over a store is cut into work (which query heads, which
// tiles of the segments and the tail), with the workspace its runs need: made once per step by
// AttentionExecutor::plan_decode, then run for every layer, so a layer's run allocates nothing.
// It fits the store as it was planned: once the store's tokens or segments change (the next
// step's append, a commit), a run with it is an Error and a new plan is due.
class DecodePlan {
 public:
  virtual ~DecodePlan() = default;
};

// Attention over a KvStore. Query heads are grouped by KV head (GQA): with n_q_heads =
// g · n_kv_heads, query head h reads KV head h / g. Every tensor is an f32 device tensor of the
// backend that made the store, and every call enqueues on `stream`.
class AttentionExecutor {
 public:
  virtual ~AttentionExecutor() = default;

  // The plan of a decode step over `store`, made after the step's token was appended to the
  // first layer: every layer holds that many tokens by the time it runs.
  virtual std::unique_ptr<DecodePlan> plan_decode(const KvStore& store, int n_q_heads) = 0;
  // One query token at the end of the sequence attends to every stored token of `layer`, as
  // `plan` cut the work (in its workspace). q and out are [1][n_q_heads · head_dim]; one softmax
  // over all segments and the tail.
  virtual void decode(Stream& stream, DecodePlan& plan, const KvStore& store, int layer,
                      const Tensor& q, float softmax_scale, const Tensor& out) = 0;

  // Causal attention for the last q.rows tokens of the store (already appended, not yet
  // committed): query i sits at position n_tokens - q.rows + i and sees positions up to it.
  // q and out are [q.rows][n_q_heads · head_dim]. Full precision.
  virtual void prefill(Stream& stream, const KvStore& store, int layer, const Tensor& q,
                       int n_q_heads, float softmax_scale, const Tensor& out) = 0;
  // How much the last q.rows tokens attend to each token: for every query head, the softmax
  // weights of those queries (causal, full precision) summed over them. For scorers that rank
  // chunks by the query's attention; runs after prefill and before any commit. q is
  // [q.rows][n_q_heads · head_dim]; mass is [n_q_heads][tokens of the layer].
  virtual void attention_mass(Stream& stream, const KvStore& store, int layer, const Tensor& q,
                              int n_q_heads, float softmax_scale, const Tensor& mass) = 0;
};

}  // namespace cocktail
