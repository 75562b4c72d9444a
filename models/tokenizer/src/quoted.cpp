#include "quoted.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cocktail::models::detail {

std::string quoted(std::string_view text, std::size_t max_bytes) {
  // Cut before a UTF-8 continuation byte, not inside a character.
  std::size_t end = std::min(text.size(), max_bytes);
  while (end > 0 && end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  std::string out = "'";
  for (std::size_t i = 0; i < end; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\\' || c == '\'') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += char(c);
    }
  }
  if (end < text.size()) out += "...";
  return out + "'";
}

}  // namespace cocktail::models::detail
