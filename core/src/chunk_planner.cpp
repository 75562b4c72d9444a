#include "cocktail/chunk_planner.hpp"

#include <fmt/format.h>

#include "cocktail/error.hpp"

namespace cocktail {

std::vector<double> score_chunks(const PlanInput& input, std::span<const ChunkPlan> chunks,
                                 std::string_view planner) {
  if (chunks.empty()) return {};
  if (input.scorer == nullptr) {
    throw Error(fmt::format(
        "the {} planner needs a chunk scorer to score the context, but none is set", planner));
  }
  const auto n_context = static_cast<std::int64_t>(input.token_texts.size());
  std::vector<std::string> texts;
  std::vector<TokenSpan> spans;
  texts.reserve(chunks.size());
  spans.reserve(chunks.size());
  for (const ChunkPlan& chunk : chunks) {
    if (chunk.first_token < 0 || chunk.n_tokens < 0 ||
        chunk.first_token + chunk.n_tokens > n_context) {
      throw Error(fmt::format(
          "the {} planner asked to score chunk {} (tokens {}..{}), outside "
          "the {} context tokens",
          planner, chunk.index, chunk.first_token, chunk.first_token + chunk.n_tokens, n_context));
    }
    std::string& text = texts.emplace_back();
    for (std::int64_t t = chunk.first_token; t < chunk.first_token + chunk.n_tokens; ++t) {
      text += input.token_texts[t];
    }
    spans.push_back({chunk.first_token, chunk.n_tokens});
  }
  const ScoringInput scoring{texts, spans, input.query, input.query_attention};
  std::vector<double> scores = input.scorer->score(scoring);
  if (scores.size() != chunks.size()) {
    throw Error(
        fmt::format("scorer '{}' returned {} scores for the {} chunks the {} planner asked "
                    "about",
                    input.scorer->name(), scores.size(), chunks.size(), planner));
  }
  return scores;
}

}  // namespace cocktail
