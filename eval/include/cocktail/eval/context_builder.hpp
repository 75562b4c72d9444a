#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/eval/eval_case.hpp"

namespace cocktail::eval {

// Counts the model tokens of a text; the runner passes the model's tokenizer.
using TokenCounter = std::function<std::int64_t(std::string_view)>;

// A sentence to hide at a depth: 0 = before the first sentence, 1 = after the last.
struct NeedlePlacement {
  std::string sentence;
  double depth = 0.0;
};

struct BuiltContext {
  std::string text;
  std::vector<CharRange> needles;  // one per placement, in the order given
};

// The largest n from 0 to `most` for which `fits(n)` holds, by binary search: `fits` holds for 0
// and, once it fails, fails for every larger n (as a prefix only grows in tokens).
std::size_t largest_fitting(std::size_t most, const std::function<bool(std::size_t)>& fits);

// The longest prefix of `text` that ends at the end of a word and has at most `max_tokens`
// tokens: a binary search over word ends, so the counter runs O(log words) times on prefixes.
std::size_t fit_prefix(std::string_view text, std::int64_t max_tokens, const TokenCounter& count);

// The start of the sentence (or the text's start or end) nearest to byte `pos`. A sentence starts
// after whitespace that follows . ! ? or holds a line break.
std::size_t sentence_start_near(std::string_view text, std::size_t pos);

// A context of at most `target_tokens` tokens (and as close to it as a word allows): a prefix
// of `source` with each needle inserted at the sentence start nearest to its depth. Throws
// Error when `source` is too short or the needles alone do not fit.
BuiltContext build_context(std::string_view source, std::int64_t target_tokens,
                           const std::vector<NeedlePlacement>& needles, const TokenCounter& count);

}  // namespace cocktail::eval
