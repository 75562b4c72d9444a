#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

namespace cocktail::testing {

// A stand-in tokenizer: one token per whitespace-separated word.
inline std::int64_t count_words(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::int64_t n = 0;
  for (std::string word; in >> word;) ++n;
  return n;
}

}  // namespace cocktail::testing
