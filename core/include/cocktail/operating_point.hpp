#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "cocktail/plan.hpp"
#include "cocktail/precision.hpp"

namespace cocktail {

// What a planner and scorer did to the cache: how the context's tokens split over the
// precisions and what the committed store costs against an FP16 cache of the same tokens.
// This is what to compare configurations by: a planner's thresholds alone do not say it, since
// the shares they give depend on how the scores spread.
struct OperatingPoint {
  std::map<Precision, int> chunks;          // chunks at each precision present
  std::int64_t context_tokens = 0;          // the planned context's tokens
  std::map<Precision, double> token_share;  // share of the context's tokens at each precision
  std::size_t kv_bytes = 0;                 // the store's bytes: codes, scales, zeros, tail
  std::size_t fp16_kv_bytes = 0;            // the same tokens in an FP16 cache

  // The plan's mean code bits per element, metadata excluded (as the paper counts them).
  double avg_code_bits() const;
  // Bits per stored K/V element, scales, zeros and the FP16 tail included.
  double avg_bits() const;
  // kv_bytes over fp16_kv_bytes.
  double kv_bytes_ratio() const;
};

// The operating point of `plan` over a context of `context_tokens` once committed into a store
// of `kv_bytes`, where an FP16 cache of the same tokens takes `fp16_kv_bytes`. Context tokens
// after the plan's last chunk (a planner's recent window) stay in the FP16 tail and count as
// FP16 in the shares and code bits.
OperatingPoint operating_point(const Plan& plan, std::int64_t context_tokens, std::size_t kv_bytes,
                               std::size_t fp16_kv_bytes);

}  // namespace cocktail
