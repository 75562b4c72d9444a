#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cocktail {

// Scores chunks of context against the user's query: higher means more relevant. Scores are
// only compared with each other, so any monotone scale works (cosine similarity, BM25, ...).
class ChunkScorer {
 public:
  virtual ~ChunkScorer() = default;
  virtual std::string_view name() const = 0;
  virtual std::vector<double> score(std::span<const std::string> chunk_texts,
                                    std::string_view query) = 0;
};

}  // namespace cocktail
