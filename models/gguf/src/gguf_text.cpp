#include "gguf_text.hpp"

#include <fmt/format.h>

namespace cocktail::models {

std::string quoted(std::string_view text, std::size_t max_chars, char quote) {
  std::string out(1, quote);
  for (const char c : text.substr(0, max_chars)) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
  }
  if (text.size() > max_chars) out += "...";
  return out + quote;
}

}  // namespace cocktail::models
