#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cocktail {

// Splits text into word pieces (a word with the whitespace before it), so that concatenating
// the pieces gives the text back. Stands in for a model tokenizer where none is loaded, as in
// `cocktail plan` on raw text: one piece counts as one token.
std::vector<std::string> split_word_pieces(std::string_view text);

}  // namespace cocktail
