#include "bm25_scorer.hpp"
#include "cocktail/plugin.hpp"

COCKTAIL_SCORER_PLUGIN("bm25", "0.1.0", "Okapi BM25 over the chunks as the corpus (no model)",
                       cocktail::scorers::Bm25Scorer)
