#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "cocktail/chunk_scorer.hpp"
#include "cocktail/models/bert_encoder.hpp"
#include "cocktail/options.hpp"

namespace cocktail::scorers {

// Scores each chunk by the cosine similarity of its all-MiniLM-L6-v2 sentence embedding with
// the query's (both mean-pooled and L2-normalised, so the cosine is their dot product). The
// query and all chunks are embedded in one call, packed into batches of `batch_tokens`
// WordPiece tokens, on the backend the engine hands over (use_backend).
class MiniLmScorer : public ChunkScorer {
 public:
  // Reads [scorer.minilm]: model_dir, batch_tokens, max_seq_tokens; opens the model. Throws
  // cocktail::Error saying to run scripts/fetch-models when the model folder is absent.
  explicit MiniLmScorer(Options& opts);

  std::string_view name() const override { return "minilm"; }
  std::vector<double> score(const ScoringInput& input) override;
  void use_backend(std::shared_ptr<Backend> backend) override;

  // The folder model_dir names by default: all-MiniLM-L6-v2 in the model cache.
  static std::filesystem::path default_model_dir();

 private:
  models::BertModel model_;
  std::int64_t batch_tokens_;
  std::size_t max_seq_tokens_;
  std::optional<models::BertEncoder> encoder_;  // keeps its buffers from call to call
};

}  // namespace cocktail::scorers
