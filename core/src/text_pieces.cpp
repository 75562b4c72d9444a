#include "cocktail/text_pieces.hpp"

#include <cctype>

namespace cocktail {

std::vector<std::string> split_word_pieces(std::string_view text) {
  std::vector<std::string> pieces;
  std::size_t start = 0;
  std::size_t i = 0;
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    while (i < text.size() && !is_space(text[i])) ++i;
    pieces.emplace_back(text.substr(start, i - start));
    start = i;
  }
  return pieces;
}

}  // namespace cocktail
