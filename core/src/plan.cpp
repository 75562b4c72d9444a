#include "cocktail/plan.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "cocktail/error.hpp"

namespace cocktail {

std::int64_t Plan::n_tokens() const {
  return chunks.empty() ? 0 : chunks.back().first_token + chunks.back().n_tokens;
}

std::vector<int> Plan::storage_order() const {
  std::vector<int> order(chunks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [this](int a, int b) {
    return chunks[std::size_t(a)].precision < chunks[std::size_t(b)].precision;
  });
  return order;
}

std::int64_t Plan::tokens_at(Precision p) const {
  std::int64_t n = 0;
  for (const ChunkPlan& c : chunks) {
    if (c.precision == p) n += c.n_tokens;
  }
  return n;
}

double Plan::average_code_bits() const {
  const std::int64_t total = n_tokens();
  if (total == 0) return 0.0;
  double bits = 0.0;
  for (const ChunkPlan& c : chunks) bits += double(c.n_tokens) * code_bits(c.precision);
  return bits / double(total);
}

bool Plan::stores_like(const Plan& other) const {
  return std::equal(chunks.begin(), chunks.end(), other.chunks.begin(), other.chunks.end(),
                    [](const ChunkPlan& a, const ChunkPlan& b) {
                      return a.first_token == b.first_token && a.n_tokens == b.n_tokens &&
                             a.precision == b.precision;
                    });
}

void Plan::validate() const {
  std::int64_t next = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const ChunkPlan& c = chunks[i];
    if (c.index != int(i) || c.first_token != next || c.n_tokens <= 0) {
      throw Error("plan chunk " + std::to_string(i) + " (index " + std::to_string(c.index) +
                  ", first token " + std::to_string(c.first_token) + ", " +
                  std::to_string(c.n_tokens) + " tokens) does not continue the plan at token " +
                  std::to_string(next));
    }
    next += c.n_tokens;
  }
}

Plan fixed_size_chunks(std::int64_t n_tokens, int chunk_size, Precision precision) {
  if (chunk_size < 1) throw Error("chunk size " + std::to_string(chunk_size) + " must be positive");
  Plan plan;
  for (std::int64_t first = 0; first < n_tokens; first += chunk_size) {
    const bool full = first + chunk_size <= n_tokens;
    plan.chunks.push_back(
        {int(plan.chunks.size()), first, full ? chunk_size : int(n_tokens - first),
         std::numeric_limits<double>::quiet_NaN(), full ? precision : Precision::fp16});
  }
  return plan;
}

}  // namespace cocktail
