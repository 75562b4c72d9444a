#include "cocktail/operating_point.hpp"

#include <fmt/format.h>

#include "cocktail/error.hpp"

namespace cocktail {

double OperatingPoint::avg_code_bits() const {
  double bits = 0.0;
  for (const auto& [precision, share] : token_share) bits += share * code_bits(precision);
  return bits;
}

double OperatingPoint::avg_bits() const {
  return 16.0 * kv_bytes_ratio();
}

double OperatingPoint::kv_bytes_ratio() const {
  return fp16_kv_bytes > 0 ? double(kv_bytes) / double(fp16_kv_bytes) : 0.0;
}

OperatingPoint operating_point(const Plan& plan, std::int64_t context_tokens, std::size_t kv_bytes,
                               std::size_t fp16_kv_bytes) {
  if (context_tokens < plan.n_tokens()) {
    throw Error(
        fmt::format("operating point: the plan covers {} tokens, more than the context's {}",
                    plan.n_tokens(), context_tokens));
  }
  OperatingPoint point;
  point.context_tokens = context_tokens;
  point.kv_bytes = kv_bytes;
  point.fp16_kv_bytes = fp16_kv_bytes;
  if (context_tokens == 0) return point;
  for (const ChunkPlan& c : plan.chunks) ++point.chunks[c.precision];
  for (const auto& [precision, n] : point.chunks) {
    point.token_share[precision] = double(plan.tokens_at(precision)) / double(context_tokens);
  }
  const std::int64_t unplanned = context_tokens - plan.n_tokens();
  if (unplanned > 0)
    point.token_share[Precision::fp16] += double(unplanned) / double(context_tokens);
  return point;
}

}  // namespace cocktail
