#include "utf8.hpp"

#include <optional>

namespace cocktail::models::detail {

namespace {

bool is_continuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

// The codepoint of the sequence at text[i] of `length` bytes; nullopt when it is cut short, a
// continuation byte is missing, or it lies above U+10FFFF.
std::optional<char32_t> read_sequence(std::string_view text, std::size_t i, int length) {
  if (i + std::size_t(length) > text.size()) return std::nullopt;
  static constexpr unsigned char lead_bits[] = {0, 0, 0x1F, 0x0F, 0x07};
  char32_t cp = static_cast<unsigned char>(text[i]) & lead_bits[length];
  for (int k = 1; k < length; ++k) {
    const auto c = static_cast<unsigned char>(text[i + std::size_t(k)]);
    if (!is_continuation(c)) return std::nullopt;
    cp = (cp << 6) | (c & 0x3F);
  }
  if (cp > 0x10FFFF) return std::nullopt;
  return cp;
}

}  // namespace

int utf8_sequence_length(unsigned char lead) {
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 0;
}

std::u32string decode_utf8_lenient(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      out += char32_t(lead);
      ++i;
      continue;
    }
    const int length = utf8_sequence_length(lead);
    const std::optional<char32_t> cp = length == 0 ? std::nullopt : read_sequence(text, i, length);
    // A bad sequence costs one byte; the bytes after it are read again.
    out += cp.value_or(kReplacementCharacter);
    i += cp ? std::size_t(length) : 1;
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

}  // namespace cocktail::models::detail
