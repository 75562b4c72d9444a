#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/chunk_scorer.hpp"
#include "cocktail/kv_shape.hpp"
#include "cocktail/plan.hpp"
#include "cocktail/quant_spec.hpp"

namespace cocktail {

// What a planner sees. `token_texts` has one entry per context token (its text piece, so a
// span of tokens detokenizes by concatenation); `n_tokens` may exceed it during decoding, when
// the planner is asked again to age generated tokens.
struct PlanInput {
  std::span<const std::string> token_texts;
  std::int64_t n_tokens = 0;
  std::string_view query;
  ChunkScorer* scorer = nullptr;  // may be null: a planner that needs one throws Error
  // The query's prefill attention, when the host collected it for the scorer; else null.
  const QueryAttention* query_attention = nullptr;
  // The cache being planned, for planners that budget bytes.
  KvShape shape = {};
  KvQuantLayout layout = {};
};

// Decides the precision of every chunk. Planners are plugins; see docs/plugins.md.
class ChunkPlanner {
 public:
  virtual ~ChunkPlanner() = default;
  virtual std::string_view name() const = 0;
  virtual Plan plan(const PlanInput& input) = 0;
  // True when the planner wants to be asked again as decoding adds tokens (the recency planner
  // moves aged tokens down a tier). Such plans must only lower precisions.
  virtual bool replans_during_decode() const { return false; }
};

// Scores `chunks` (of input's context) with input.scorer: builds each chunk's text from its
// tokens' pieces and hands over its token span and the query attention. Throws Error naming
// `planner` when there is no scorer, a chunk lies outside the context, or the scorer returns
// the wrong number of scores.
std::vector<double> score_chunks(const PlanInput& input, std::span<const ChunkPlan> chunks,
                                 std::string_view planner);

}  // namespace cocktail
