#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cocktail/kv_shape.hpp"
#include "cocktail/plan.hpp"
#include "cocktail/quant_spec.hpp"
#include "cocktail/stream.hpp"
#include "cocktail/tensor.hpp"

namespace cocktail {

struct KvStoreOptions {
  KvShape shape;
  KvQuantLayout layout;
  // Hard cap on tokens (0 = none). Appending past it is an Error naming both numbers.
  std::int64_t max_tokens = 0;
};

// A run of stored tokens of one precision, as reported for stats and reports.
struct SegmentInfo {
  Precision precision = Precision::fp16;
  std::int64_t n_tokens = 0;
  std::size_t bytes = 0;  // all layers and heads, metadata included
};

// Dequantized contents of one layer × KV head in storage order, for inspection and tests.
struct KvHeadSnapshot {
  std::vector<std::int64_t> positions;  // original token index of each stored row
  std::vector<float> keys;              // [rows][head_dim]
  std::vector<float> values;            // [rows][head_dim]
};

// One sequence's K/V cache, in its backend's device memory. Tokens arrive at full precision
// into an FP16 tail; commit(plan) reorders the planned tokens into precision segments and
// quantizes them; later tokens (query, generated) keep growing the tail without touching the
// segments. append and commit enqueue on the stream they are given; the inspection calls
// (snapshot, clone) wait for the store's work to finish.
class KvStore {
 public:
  virtual ~KvStore() = default;
  virtual const KvStoreOptions& options() const = 0;

  // Appends k.rows tokens of one layer to the tail: k and v are f32 device tensors
  // [n_tokens][n_kv_heads · head_dim] (keys after RoPE). Every layer must receive the same
  // tokens.
  virtual void append(Stream& stream, int layer, const Tensor& k, const Tensor& v) = 0;
  // Stores tokens [0, plan.n_tokens()) as the plan says. A later commit may only lower
  // precisions; each token is requantized from its FP16 or INT8 form, never from a lower one.
  virtual void commit(Stream& stream, const Plan& plan) = 0;

  virtual std::int64_t n_tokens() const = 0;  // every token of layer 0
  // Tokens in quantized segments. A plan's last chunk, when FP16 and shorter than the store's
  // tile, stays in the tail at its exact size, so this can be less than plan().n_tokens().
  virtual std::int64_t n_committed() const = 0;
  virtual const Plan& plan() const = 0;  // the last committed plan
  // Exact bytes of K/V storage: codes, scales, zeros and the FP16 tail.
  virtual std::size_t bytes() const = 0;
  virtual std::vector<SegmentInfo> segments() const = 0;  // storage order, tail last
  virtual KvHeadSnapshot snapshot(int layer, int kv_head) const = 0;
  // An independent copy: the same tokens, segments and plan, quantizing with `layout` from
  // then on. The layout may differ from this store's only while nothing is committed (an
  // evaluation prefills once, then commits each method's plan and layout on its own copy);
  // otherwise that is an Error.
  virtual std::shared_ptr<KvStore> clone(const KvQuantLayout& layout) const = 0;
};

}  // namespace cocktail
