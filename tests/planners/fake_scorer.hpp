#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cocktail/chunk_scorer.hpp"

namespace cocktail::testing {

// Returns scores chosen by the test and remembers what it was asked.
class FakeScorer : public ChunkScorer {
 public:
  explicit FakeScorer(std::vector<double> scores) : scores_(std::move(scores)) {}

  std::string_view name() const override { return "fake"; }
  std::vector<double> score(std::span<const std::string> chunk_texts,
                            std::string_view query) override {
    ++calls;
    texts.assign(chunk_texts.begin(), chunk_texts.end());
    last_query = query;
    return scores_;
  }

  int calls = 0;
  std::vector<std::string> texts;
  std::string last_query;

 private:
  std::vector<double> scores_;
};

// n context token pieces: "t0 ", "t1 ", ...
inline std::vector<std::string> make_tokens(int n) {
  std::vector<std::string> tokens;
  for (int i = 0; i < n; ++i) tokens.push_back("t" + std::to_string(i) + " ");
  return tokens;
}

}  // namespace cocktail::testing
