#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cocktail/chunk_scorer.hpp"
#include "cocktail/options.hpp"

namespace cocktail::scorers {

// Okapi BM25 with the given chunks as the whole corpus (N chunks, avglen their mean length):
//   idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//   score(c) = sum over query terms t, repeats included, of
//              idf(t) · tf(t,c) · (k1 + 1) / (tf(t,c) + k1 · (1 - b + b · len(c) / avglen))
// Terms: ASCII lowercased, split on every byte that is not [a-z0-9] and below 0x80 (so UTF-8
// letters stay inside words). Needs no model: a cheap scorer for tests and CPU-only runs.
class Bm25Scorer : public ChunkScorer {
 public:
  // Reads [scorer.bm25]: k1, b.
  explicit Bm25Scorer(Options& opts);

  std::string_view name() const override { return "bm25"; }
  std::vector<double> score(const ScoringInput& input) override;

  // The terms of `text`, in order, repeats kept.
  static std::vector<std::string> terms(std::string_view text);

 private:
  double k1_;
  double b_;
};

}  // namespace cocktail::scorers
