#include "cocktail/plugin.hpp"
#include "minilm_scorer.hpp"

COCKTAIL_SCORER_PLUGIN("minilm", "0.1.0",
                       "cosine similarity of all-MiniLM-L6-v2 sentence embeddings (BERT encoder "
                       "on the backend's Compute)",
                       cocktail::scorers::MiniLmScorer)
