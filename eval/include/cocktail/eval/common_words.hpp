#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/eval/context_builder.hpp"

namespace cocktail::eval {

// The words a common-words list draws from: the distinct words of `text` made of 4 or more ASCII
// letters, lower-cased, in sorted order, less the words of the list's instructions and question
// (so that echoing the question finds nothing).
std::vector<std::string> list_vocabulary(std::string_view text);

// How often each common word and each other word appears in a list of at most `max_tokens`
// tokens: RULER's 30 and 3 from 4,096 tokens up, 6 and 1 below.
struct WordRepeats {
  int common = 0;
  int other = 0;
};
WordRepeats word_repeats(std::int64_t max_tokens);

struct WordList {
  std::string context;   // the instructions, a line break, then "1. harbour 2. lantern ..."
  std::string question;  // "What are the 10 most common words in the above list?"
  std::vector<std::string> common;  // the answer: the `common` most frequent words
};

// RULER's common-words extraction: `common` words drawn from `vocabulary` by the seed appear
// word_repeats().common times each, and as many other words from it as fit in `max_tokens`
// tokens appear word_repeats().other times each, shuffled and numbered. Throws Error when even
// the common words do not fit, or when the vocabulary runs out before the list fills
// `max_tokens` (the haystack is too small).
WordList make_common_words(std::uint64_t seed, int common, std::int64_t max_tokens,
                           std::span<const std::string> vocabulary, const TokenCounter& count);

}  // namespace cocktail::eval
