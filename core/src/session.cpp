#include "cocktail/session.hpp"

#include <cmath>
#include <utility>

#include "cocktail/error.hpp"
#include "cocktail/tensor_allocation.hpp"

namespace cocktail {

Session::Session(std::shared_ptr<Backend> backend, std::shared_ptr<KvStore> store,
                 std::shared_ptr<AttentionExecutor> attention,
                 std::shared_ptr<ChunkPlanner> planner, std::shared_ptr<ChunkScorer> scorer)
    : backend_(std::move(backend)),
      store_(std::move(store)),
      attention_(std::move(attention)),
      planner_(std::move(planner)),
      scorer_(std::move(scorer)) {
  if (!backend_ || !store_ || !attention_ || !planner_ || !scorer_) {
    throw Error(
        "Session: a backend, a KV store, an attention executor, a planner and a scorer "
        "are all needed");
  }
  stream_ = backend_->make_stream();
}

void Session::use_stream(std::shared_ptr<Stream> stream) {
  if (!stream) throw Error("Session::use_stream: no stream");
  stream_ = std::move(stream);
}

Session Session::fork() const {
  Session copy(backend_, store_->clone(store_->options().layout), attention_, planner_, scorer_);
  copy.context_texts_ = context_texts_;
  copy.query_ = query_;
  copy.planned_ = planned_;
  return copy;
}

float Session::softmax_scale() const {
  return 1.0f / std::sqrt(float(store_->options().shape.head_dim));
}

// The method in one screen: prefill at full precision, then score + plan + commit (reorder and
// quantize), then decode over the mixed-precision segments plus the FP16 tail.
void Session::append(int layer, const Tensor& k, const Tensor& v) {
  if (layer == 0) age_if_planner_wants();
  store_->append(*stream_, layer, k, v);
}

void Session::prefill_attention(int layer, const Tensor& q, int n_q_heads, const Tensor& out) {
  attention_->prefill(*stream_, *store_, layer, q, n_q_heads, softmax_scale(), out);
}

void Session::attention_mass(int layer, const Tensor& q, int n_q_heads, const Tensor& mass) const {
  attention_->attention_mass(*stream_, *store_, layer, q, n_q_heads, softmax_scale(), mass);
}

const Plan& Session::plan_and_commit(std::span<const std::string> context_texts,
                                     std::string_view query,
                                     const QueryAttention* query_attention) {
  context_texts_.assign(context_texts.begin(), context_texts.end());
  query_ = query;
  Plan plan = planner_->plan(plan_input(query_attention));
  plan.validate();
  commit(plan);
  planned_ = true;
  return store_->plan();
}

void Session::decode_attention(int layer, const Tensor& q, int n_q_heads, const Tensor& out) {
  if (!decode_plan_ || decode_plan_tokens_ != store_->n_tokens() ||
      decode_plan_heads_ != n_q_heads) {
    decode_plan_ = attention_->plan_decode(*store_, n_q_heads);
    decode_plan_tokens_ = store_->n_tokens();
    decode_plan_heads_ = n_q_heads;
  }
  attention_->decode(*stream_, *decode_plan_, *store_, layer, q, softmax_scale(), out);
}

void Session::append(int layer, std::span<const float> k, std::span<const float> v,
                     std::int64_t n_tokens) {
  const auto width = std::int64_t(store_->options().shape.token_floats());
  const DeviceRows kd = upload_rows(*backend_, *stream_, k, n_tokens, width, "append: k");
  const DeviceRows vd = upload_rows(*backend_, *stream_, v, n_tokens, width, "append: v");
  append(layer, kd.tensor, vd.tensor);
  stream_->synchronize();
}

void Session::prefill_attention(int layer, std::span<const float> q, std::int64_t n_new,
                                int n_q_heads, std::span<float> out) {
  const std::int64_t width = std::int64_t(n_q_heads) * store_->options().shape.head_dim;
  const DeviceRows qd = upload_rows(*backend_, *stream_, q, n_new, width, "prefill_attention: q");
  const DeviceRows od = device_rows(*backend_, out.size(), n_new, width, "prefill_attention: out");
  prefill_attention(layer, qd.tensor, n_q_heads, od.tensor);
  download(*stream_, od.tensor, out);
  stream_->synchronize();
}

void Session::attention_mass(int layer, std::span<const float> q, std::int64_t n_query,
                             int n_q_heads, std::span<float> mass) const {
  const std::int64_t width = std::int64_t(n_q_heads) * store_->options().shape.head_dim;
  const DeviceRows qd = upload_rows(*backend_, *stream_, q, n_query, width, "attention_mass: q");
  const DeviceRows md =
      device_rows(*backend_, mass.size(), n_q_heads, store_->n_tokens(), "attention_mass: mass");
  attention_mass(layer, qd.tensor, n_q_heads, md.tensor);
  download(*stream_, md.tensor, mass);
  stream_->synchronize();
}

void Session::decode_attention(int layer, std::span<const float> q, int n_q_heads,
                               std::span<float> out) {
  const std::int64_t width = std::int64_t(n_q_heads) * store_->options().shape.head_dim;
  const DeviceRows qd = upload_rows(*backend_, *stream_, q, 1, width, "decode_attention: q");
  const DeviceRows od = device_rows(*backend_, out.size(), 1, width, "decode_attention: out");
  decode_attention(layer, qd.tensor, n_q_heads, od.tensor);
  download(*stream_, od.tensor, out);
  stream_->synchronize();
}

void Session::commit(const Plan& plan) {
  store_->commit(*stream_, plan);
  decode_plan_.reset();
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
  if (plan.stores_like(store_->plan())) return;
  plan.validate();
  commit(plan);
}

}  // namespace cocktail
