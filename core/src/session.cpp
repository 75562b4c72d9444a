#include "cocktail/session.hpp"

#include <cmath>
#include <utility>

namespace cocktail {

Session::Session(std::shared_ptr<KvStore> store, std::shared_ptr<AttentionExecutor> attention,
                 std::shared_ptr<ChunkPlanner> planner, std::shared_ptr<ChunkScorer> scorer)
    : store_(std::move(store)),
      attention_(std::move(attention)),
      planner_(std::move(planner)),
      scorer_(std::move(scorer)) {}

Session Session::fork() const {
  Session copy = *this;
  copy.store_ = store_->clone(store_->options().layout);
  return copy;
}

float Session::softmax_scale() const {
  return 1.0f / std::sqrt(float(store_->options().shape.head_dim));
}

// The method in one screen: prefill at full precision, then score + plan + commit (reorder and
// quantize), then decode over the mixed-precision segments plus the FP16 tail.
void Session::append(int layer, std::span<const float> k, std::span<const float> v,
                     std::int64_t n_tokens) {
  if (layer == 0) age_if_planner_wants();
  store_->append(layer, k, v, n_tokens);
}

void Session::prefill_attention(int layer, std::span<const float> q, std::int64_t n_new,
                                int n_q_heads, std::span<float> out) {
  attention_->prefill(*store_, layer, q, n_new, n_q_heads, softmax_scale(), out);
}

void Session::attention_mass(int layer, std::span<const float> q, std::int64_t n_query,
                             int n_q_heads, std::span<float> mass) const {
  attention_->attention_mass(*store_, layer, q, n_query, n_q_heads, softmax_scale(), mass);
}

const Plan& Session::plan_and_commit(std::span<const std::string> context_texts,
                                     std::string_view query,
                                     const QueryAttention* query_attention) {
  context_texts_.assign(context_texts.begin(), context_texts.end());
  query_ = query;
  Plan plan = planner_->plan(plan_input(query_attention));
  plan.validate();
  store_->commit(plan);
  planned_ = true;
  return store_->plan();
}

void Session::decode_attention(int layer, std::span<const float> q, int n_q_heads,
                               std::span<float> out) {
  attention_->decode(*store_, layer, q, n_q_heads, softmax_scale(), out);
}

PlanInput Session::plan_input(const QueryAttention* query_attention) const {
  const KvStoreOptions& options = store_->options();
  return {context_texts_,  store_->n_tokens(), query_,        scorer_.get(),
          query_attention, options.shape,      options.layout};
}

// A planner that ages tokens (recency) is asked again before each new token, so tokens that
// left its FP16 window move down a tier between decode steps, never inside one.
void Session::age_if_planner_wants() {
  if (!planned_ || !planner_->replans_during_decode()) return;
  Plan plan = planner_->plan(plan_input(nullptr));
  if (plan.chunks == store_->plan().chunks) return;
  plan.validate();
  store_->commit(plan);
}

}  // namespace cocktail
