#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "cocktail/chunk_scorer.hpp"
#include "cocktail/options.hpp"

namespace cocktail::scorers {

// Scores a chunk by the attention the query tokens paid its tokens during prefill: the query
// follows the context, so the model has already computed it, and no second model runs. For
// each selected layer and query head, a chunk's mass is the sum over its tokens of the weights
// the query tokens gave them; `aggregate` reduces those over heads and layers (max, the default,
// follows the few heads that retrieve; or mean). Layers are first_layer, first_layer + layer_step,
// ... up to last_layer (negative counts from the end: -1 is the last layer). The first
// `sink_tokens` of the context are left out: attention sinks draw mass whatever the query asks.
//
// It needs a host that runs the model and collects the attention (cocktail run, cocktail eval,
// a QuestionAnswerer): without it score() is an Error, as `cocktail plan` has no model.
class AttentionScorer : public ChunkScorer {
 public:
  // Reads [scorer.attention]: first_layer, last_layer, layer_step, aggregate, sink_tokens.
  explicit AttentionScorer(Options& opts);

  std::string_view name() const override { return "attention"; }
  std::vector<double> score(const ScoringInput& input) override;
  std::vector<int> query_attention_layers(int n_layers) const override;

 private:
  int first_layer_;
  int last_layer_;
  int layer_step_;
  bool use_max_;
  std::int64_t sink_tokens_;
};

}  // namespace cocktail::scorers
