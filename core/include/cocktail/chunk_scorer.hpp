#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/backend.hpp"

namespace cocktail {

// A run of context tokens: [first, first + count).
struct TokenSpan {
  std::int64_t first = 0;
  std::int64_t count = 0;
};

// The attention the query tokens gave the context during prefill, for scorers that read it.
// mass[(l * n_heads + h) * n_tokens + t] is the softmax weight that query head h of layer
// layers[l] gave context token t, summed over the query tokens.
struct QueryAttention {
  std::vector<int> layers;
  int n_heads = 0;
  std::int64_t n_tokens = 0;
  std::vector<float> mass;

  std::span<const float> head(int layer_slot, int head_index) const {
    return std::span<const float>(mass).subspan(
        (static_cast<std::size_t>(layer_slot) * n_heads + head_index) * n_tokens, n_tokens);
  }
};

// What a scorer sees: the chunks (text and where they sit in the context) and the query.
struct ScoringInput {
  std::span<const std::string> chunk_texts;  // each chunk's token pieces, concatenated
  std::span<const TokenSpan> chunk_tokens;   // one per chunk text
  std::string_view query;
  // Present when the host ran the model and the scorer asked for it (query_attention_layers).
  const QueryAttention* query_attention = nullptr;
};

// Scores chunks of context against the user's query: higher means more relevant. Scores are
// only compared with each other, so any monotone scale works (cosine similarity, BM25, ...).
class ChunkScorer {
 public:
  virtual ~ChunkScorer() = default;
  virtual std::string_view name() const = 0;
  // One score per chunk; NaN where a chunk cannot be scored.
  virtual std::vector<double> score(const ScoringInput& input) = 0;

  // The engine hands every scorer its backend once, before any score(): a scorer that runs an
  // encoder runs it there (the backend's Compute, its buffers and a stream of its own).
  virtual void use_backend(std::shared_ptr<Backend> /*backend*/) {}
  // The layers (of a model with `n_layers`) whose prefill attention from the query tokens the
  // scorer reads. A host that runs the model collects those into ScoringInput::query_attention;
  // empty (the default) means none, and then nothing is collected.
  virtual std::vector<int> query_attention_layers(int /*n_layers*/) const { return {}; }
};

}  // namespace cocktail
