#include "toml_guard.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <utility>

namespace cocktail {

namespace {

// Debian's toml++ 3.3 reaches an unreachable branch when it asks whether some non-ASCII
// characters are whitespace (U+00A1 to U+0499 among others; fixed upstream after 3.3). It asks
// of each character where whitespace may stand, and of the first one after a backslash in a
// multi-line basic string. Outside strings and comments a non-ASCII character is never valid
// TOML, so the scanner refuses it; after a line-ending backslash it is valid, and the scanner
// writes it as its \u escape, which means the same.
class TomlScanner {
 public:
  explicit TomlScanner(std::string_view text) : text_(text) {}

  // The text toml++ can take safely; throws TomlHazard.
  std::string safe_text() {
    if (at("\xEF\xBB\xBF")) copy(3);  // toml++ skips a byte order mark
    body_begin_ = pos_;
    while (!done()) {
      const char c = text_[pos_];
      if (c == '#') {
        copy_until_line_end();
      } else if ((c == '"' || c == '\'') && may_open_string()) {
        copy_string(c);
      } else if (is_non_ascii(c)) {
        fail("a non-ASCII character outside a string or comment; allowed there: ASCII only");
      } else {
        follow_structure(c);
        copy(1);
      }
    }
    return std::move(out_);
  }

 private:
  static bool is_non_ascii(char c) { return static_cast<unsigned char>(c) >= 0x80; }
  static bool is_space_or_line_break(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

  bool done() const { return pos_ >= text_.size(); }
  bool at(std::string_view s) const { return text_.substr(pos_).starts_with(s); }
  [[noreturn]] void fail(const std::string& what) const { throw TomlHazard{line_, column_, what}; }

  // Copies `n` bytes (fewer at the end) to the output, counting lines and characters.
  void copy(std::size_t n) {
    for (; n > 0 && !done(); --n, ++pos_) {
      const char c = text_[pos_];
      out_ += c;
      if (c == '\n') {
        ++line_;
        column_ = 1;
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
        ++column_;
      }
    }
  }

  // toml++ reads a bare value (a number, date, boolean) up to whitespace or one of ] } , #, so
  // a quote glued to one (1979-05-27T07:32.'x', 1=""é) is part of it and opens no string.
  bool may_open_string() const { return !in_bare_value_; }

  static bool ends_bare_value(char c) {
    return std::string_view(" \t\r\n]},").find(c) != std::string_view::npos;
  }

  // Follows `c`, a character outside strings and comments: whether a key may stand at the
  // cursor (on a line outside brackets, in a table header, in an inline table before its
  // '='), and whether toml++ is reading a bare value.
  void follow_structure(char c) {
    if (in_bare_value_ && !ends_bare_value(c)) return;
    in_bare_value_ = false;
    const bool was_key = in_key_;
    const char innermost = nesting_.empty() ? '\0' : nesting_.back();
    if (c == '\n' && nesting_.empty()) in_key_ = true;
    if (c == '=') in_key_ = false;
    if (c == ',' && innermost == '{') in_key_ = true;
    if (c == '{') in_key_ = true;
    if (c == '[' || c == '{') nesting_ += c == '[' && in_key_ ? 'h' : c;  // 'h': a table header
    if ((c == ']' || c == '}') && !nesting_.empty()) {
      nesting_.pop_back();
      if (innermost != 'h') in_key_ = false;
    }
    const bool opens_no_value = is_space_or_line_break(c) || ends_bare_value(c) ||
                                std::string_view("[{'\"").find(c) != std::string_view::npos;
    if (!was_key && !in_key_ && !opens_no_value) in_bare_value_ = true;
  }

  void copy_string(char quote) {
    if (quote == '"' && at(R"(""")")) return copy_multi_line_basic();
    if (quote == '\'' && at("\'\'\'")) return copy_multi_line_literal();
    copy_single_line_string(quote);
  }

  void copy_until_line_end() {
    while (!done() && text_[pos_] != '\n') copy(1);
  }

  // A basic or literal string on one line; an unclosed one ends with the line (toml++ refuses
  // it there).
  void copy_single_line_string(char quote) {
    copy(1);
    while (!done() && text_[pos_] != '\n') {
      if (text_[pos_] == quote) return copy(1);
      copy(quote == '"' && text_[pos_] == '\\' ? 2 : 1);
    }
  }

  // Up to five quotes close a multi-line string: the last three close it, the others are text.
  void copy_closing_quotes(char quote) {
    for (int i = 0; i < 5 && !done() && text_[pos_] == quote; ++i) copy(1);
  }

  void copy_multi_line_literal() {
    copy(3);
    while (!done() && !at("'''")) copy(1);
    copy_closing_quotes('\'');
  }

  void copy_multi_line_basic() {
    copy(3);
    while (!done() && !at(R"(""")")) {
      const bool backslash = text_[pos_] == '\\';
      copy(1);
      if (backslash) copy_after_backslash();
    }
    copy_closing_quotes('"');
  }

  // After a backslash: an escape character, or whitespace up to a line break (a line-ending
  // backslash, which trims the whitespace and line breaks after it).
  void copy_after_backslash() {
    if (done()) return;
    if (!is_space_or_line_break(text_[pos_])) {
      if (is_non_ascii(text_[pos_])) {
        fail(R"(a non-ASCII character after a backslash; allowed: an escape such as \n or \u00E9)");
      }
      return copy(1);
    }
    bool line_ended = false;
    while (!done() && is_space_or_line_break(text_[pos_])) {
      line_ended = line_ended || text_[pos_] == '\n';
      copy(1);
    }
    if (done() || !is_non_ascii(text_[pos_])) return;
    if (!line_ended) {
      fail(
          "a non-ASCII character after a backslash and spaces; allowed: a backslash that ends "
          "its line");
    }
    escape_character();
  }

  // Replaces the UTF-8 character at the cursor with its \u or \U escape.
  void escape_character() {
    const auto lead = static_cast<unsigned char>(text_[pos_]);
    const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (lead < 0xC2 || lead > 0xF4) fail("invalid UTF-8");
    char32_t c = lead & (0x7F >> length);
    for (std::size_t i = 1; i < length; ++i) {
      const auto next = pos_ + i < text_.size() ? static_cast<unsigned char>(text_[pos_ + i]) : 0;
      if ((next & 0xC0) != 0x80) fail("invalid UTF-8");
      c = (c << 6) | (next & 0x3F);
    }
    out_ += c <= 0xFFFF ? fmt::format("\\u{:04X}", std::uint32_t(c))
                        : fmt::format("\\U{:08X}", std::uint32_t(c));
    pos_ += length;
    ++column_;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t body_begin_ = 0;  // after the byte order mark
  std::string nesting_;         // open brackets outside strings: '[' array, 'h' header, '{'
  bool in_key_ = true;
  bool in_bare_value_ = false;
  std::string out_;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

std::string toml_safe_text(std::string_view text) {
  return TomlScanner(text).safe_text();
}

}  // namespace cocktail
