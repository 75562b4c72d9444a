#include "pre_tokenizer.hpp"

#include <unicode/uchar.h>

#include <optional>
#include <string>

#include "cocktail/error.hpp"
#include "quoted.hpp"

namespace cocktail::models::detail {

namespace {

bool is_whitespace(char32_t cp) {
  if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

// The GPT-2 pattern over text[begin, end), appending word ends. This is the pattern's
// leftmost-first matching written out, as llama.cpp's custom splitter does it.
class Gpt2Splitter {
 public:
  Gpt2Splitter(std::u32string_view text, const std::vector<CharClass>& classes, std::size_t end)
      : text_(text), classes_(classes), end_(end) {}

  void split(std::size_t begin, std::vector<std::size_t>& ends) const {
    std::size_t pos = begin;
    while (pos < end_) {
      pos += word_length(pos);
      ends.push_back(pos);
    }
  }

 private:
  // The class at `pos`, or nullopt past the piece: the patterns never look beyond it.
  std::optional<CharClass> class_at(std::size_t pos) const {
    if (pos >= end_) return std::nullopt;
    return classes_[pos];
  }

  // 's|'t|'re|'ve|'m|'ll|'d, lowercase only.
  std::size_t contraction_length(std::size_t pos) const {
    if (text_[pos] != U'\'' || pos + 1 >= end_) return 0;
    const char32_t a = text_[pos + 1];
    if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
    if (pos + 2 >= end_) return 0;
    const char32_t b = text_[pos + 2];
    const bool two =
        (a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l');
    return two ? 3 : 0;
  }

  std::size_t word_length(std::size_t pos) const {
    if (const std::size_t n = contraction_length(pos)) return n;
    // " ?\p{L}+", " ?\p{N}+" and " ?[^\s\p{L}\p{N}]+": an optional space, then a run of one
    // class.
    const bool space = text_[pos] == U' ';
    const std::optional<CharClass> run = space ? class_at(pos + 1) : class_at(pos);
    if (run && *run != CharClass::whitespace) {
      std::size_t end = pos + (space ? 1 : 0);
      while (class_at(end) == run) ++end;
      return end - pos;
    }
    // "\s+(?!\S)|\s+": a run of whitespace leaves its last character to the word after it.
    std::size_t n = 0;
    while (class_at(pos + n) == CharClass::whitespace) ++n;
    return n > 1 && pos + n < end_ ? n - 1 : n;
  }

  std::u32string_view text_;
  const std::vector<CharClass>& classes_;
  std::size_t end_;
};

void split_smollm(std::u32string_view text, std::vector<std::size_t>& ends) {
  std::vector<CharClass> classes(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) classes[i] = char_class(text[i]);
  std::size_t begin = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (classes[i] != CharClass::number) continue;
    // \p{N} takes this character alone; the piece before it goes through the GPT-2 pattern.
    Gpt2Splitter(text, classes, i).split(begin, ends);
    ends.push_back(i + 1);
    begin = i + 1;
  }
  Gpt2Splitter(text, classes, text.size()).split(begin, ends);
}

}  // namespace

PreTokenizer pre_tokenizer_named(std::string_view name) {
  if (name == "smollm") return PreTokenizer::smollm;
  throw Error("pre-tokenizer " + quoted(name) +
              " (tokenizer.ggml.pre) is not supported; "
              "supported: smollm");
}

CharClass char_class(char32_t cp) {
  if (is_whitespace(cp)) return CharClass::whitespace;
  const auto category_mask = U_GET_GC_MASK(UChar32(cp));
  if (category_mask & U_GC_L_MASK) return CharClass::letter;
  if (category_mask & U_GC_N_MASK) return CharClass::number;
  return CharClass::other;
}

std::vector<std::size_t> split_words(PreTokenizer kind, std::u32string_view text) {
  std::vector<std::size_t> ends;
  ends.reserve(text.size() / 3 + 1);
  switch (kind) {
    case PreTokenizer::smollm:
      split_smollm(text, ends);
      break;
  }
  return ends;
}

}  // namespace cocktail::models::detail
