#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "cocktail/precision.hpp"

namespace cocktail {

// One chunk of the context: a run of tokens in original order, its score (NaN when the
// planner did not ask for scores) and the precision the planner gave it.
struct ChunkPlan {
  int index = 0;
  std::int64_t first_token = 0;
  int n_tokens = 0;
  double score = std::numeric_limits<double>::quiet_NaN();
  Precision precision = Precision::fp16;

  friend bool operator==(const ChunkPlan&, const ChunkPlan&) = default;
};

// A planner's verdict over tokens [0, n_tokens()): chunks in token order, contiguous, from
// token 0. Tokens past the plan stay in the FP16 tail.
struct Plan {
  std::vector<ChunkPlan> chunks;
  // The planner's Eq. 2-3 parameters and thresholds, for reports; NaN when it has none.
  double alpha = std::numeric_limits<double>::quiet_NaN();
  double beta = std::numeric_limits<double>::quiet_NaN();
  double t_low = std::numeric_limits<double>::quiet_NaN();
  double t_high = std::numeric_limits<double>::quiet_NaN();

  std::int64_t n_tokens() const;
  // Chunk indices in storage order: grouped by precision (fp16 first, int2 last), token order
  // kept within a precision. This is the reordering of the method.
  std::vector<int> storage_order() const;
  // Tokens of the plan at precision p.
  std::int64_t tokens_at(Precision p) const;
  // Mean code bits per element over the plan's tokens (metadata excluded; see KvStore::bytes()
  // for the exact footprint).
  double average_code_bits() const;
  // Throws cocktail::Error naming the first chunk that is not contiguous from token 0.
  void validate() const;
  // Whether a store holds both plans alike: the same chunk spans at the same precisions. Scores
  // do not count (and NaN, every unscored chunk's score, equals nothing, itself included).
  bool stores_like(const Plan& other) const;
};

// Chunks of `chunk_size` tokens over tokens [0, n_tokens), in token order, unscored. Full
// chunks get `precision`; a remainder shorter than a chunk stays FP16 (the method's rule).
Plan fixed_size_chunks(std::int64_t n_tokens, int chunk_size, Precision precision);

}  // namespace cocktail
