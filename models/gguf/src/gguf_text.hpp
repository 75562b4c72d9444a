#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cocktail::models {

// `text` between `quote`s for a message: printable ASCII as it is, other bytes as \xNN, the
// quote and backslash escaped, and cut with "..." after `max_chars` bytes of text.
std::string quoted(std::string_view text, std::size_t max_chars, char quote);

}  // namespace cocktail::models
