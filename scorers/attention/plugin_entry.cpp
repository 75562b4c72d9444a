#include "attention_scorer.hpp"
#include "cocktail/plugin.hpp"

COCKTAIL_SCORER_PLUGIN(
    "attention", "0.1.0",
    "The attention mass the query gave each chunk during prefill (no extra model)",
    cocktail::scorers::AttentionScorer)
