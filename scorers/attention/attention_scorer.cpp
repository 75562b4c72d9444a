#include "attention_scorer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cocktail/error.hpp"

namespace cocktail::scorers {

AttentionScorer::AttentionScorer(Options& opts)
    : first_layer_(static_cast<int>(opts.get_int("first_layer", 0, -4096, 4095))),
      last_layer_(static_cast<int>(opts.get_int("last_layer", -1, -4096, 4095))),
      layer_step_(static_cast<int>(opts.get_int("layer_step", 1, 1, 4096))),
      use_max_(opts.get_choice("aggregate", "max", {"mean", "max"}) == "max"),
      sink_tokens_(opts.get_int("sink_tokens", 4, 0, std::int64_t{1} << 40)) {}

std::vector<int> AttentionScorer::query_attention_layers(int n_layers) const {
  const auto resolve = [n_layers](int layer) { return layer < 0 ? n_layers + layer : layer; };
  const int first = resolve(first_layer_);
  const int last = resolve(last_layer_);
  if (first < 0 || last >= n_layers || first > last) {
    throw Error(
        fmt::format("attention scorer: layers {} to {} (first_layer = {}, last_layer = {}) "
                    "are not a range of the model's {} layers",
                    first, last, first_layer_, last_layer_, n_layers));
  }
  std::vector<int> layers;
  for (int l = first; l <= last; l += layer_step_) layers.push_back(l);
  return layers;
}

std::vector<double> AttentionScorer::score(const ScoringInput& input) {
  const QueryAttention* attention = input.query_attention;
  if (attention == nullptr || attention->layers.empty()) {
    throw Error(
        "the attention scorer reads the query's attention from a model run, and none was given "
        "(QuestionAnswerer and the cocktail commands that run a model pass it; a host calling "
        "the planner directly must fill PlanInput::query_attention or pick a text scorer)");
  }
  const std::size_t n_heads = std::size_t(attention->n_heads);
  std::vector<double> scores(input.chunk_tokens.size());
  for (std::size_t c = 0; c < input.chunk_tokens.size(); ++c) {
    const TokenSpan span = input.chunk_tokens[c];
    if (span.first < 0 || span.first + span.count > attention->n_tokens) {
      throw Error(
          fmt::format("attention scorer: chunk {} covers tokens {} to {}, beyond the {} "
                      "tokens whose attention was collected",
                      c, span.first, span.first + span.count, attention->n_tokens));
    }
    double total = 0.0;
    double best = 0.0;
    for (std::size_t slot = 0; slot < attention->layers.size(); ++slot) {
      for (std::size_t h = 0; h < n_heads; ++h) {
        // Attention sinks draw mass whatever the query asks; they are left out.
        const std::int64_t first = std::max(span.first, sink_tokens_);
        const std::int64_t end = span.first + span.count;
        const auto mass = attention->head(int(slot), int(h))
                              .subspan(std::size_t(std::min(first, end)),
                                       std::size_t(std::max<std::int64_t>(end - first, 0)));
        double chunk_mass = 0.0;
        for (float m : mass) chunk_mass += m;
        total += chunk_mass;
        best = std::max(best, chunk_mass);
      }
    }
    scores[c] = use_max_ ? best : total / double(attention->layers.size() * n_heads);
  }
  return scores;
}

}  // namespace cocktail::scorers
