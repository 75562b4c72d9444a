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

bool is_newline(char32_t cp) {
  return cp == U'\r' || cp == U'\n';
}

char32_t ascii_lower(char32_t cp) {
  return cp >= U'A' && cp <= U'Z' ? cp - U'A' + U'a' : cp;
}

// What the patterns share: a piece text[.., end) with its characters' classes, and the
// contractions. Each pattern's leftmost-first matching is written out, as llama.cpp's custom
// splitters do it.
class Piece {
 public:
  Piece(std::u32string_view text, const std::vector<CharClass>& classes, std::size_t end)
      : text_(text), classes_(classes), end_(end) {}

 protected:
  // The class at `pos`, or nullopt past the piece: the patterns never look beyond it.
  std::optional<CharClass> class_at(std::size_t pos) const {
    if (pos >= end_) return std::nullopt;
    return classes_[pos];
  }

  // 's|'t|'re|'ve|'m|'ll|'d, lowercase only or, with any_case, in either case.
  std::size_t contraction_length(std::size_t pos, bool any_case) const {
    if (text_[pos] != U'\'' || pos + 1 >= end_) return 0;
    const auto letter = [&](std::size_t at) {
      return any_case ? ascii_lower(text_[at]) : text_[at];
    };
    const char32_t a = letter(pos + 1);
    if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
    if (pos + 2 >= end_) return 0;
    const char32_t b = letter(pos + 2);
    const bool two =
        (a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l');
    return two ? 3 : 0;
  }

  // A run of whitespace from `pos`: its length, and the length up to its last \r or \n (0 if
  // it has none).
  std::pair<std::size_t, std::size_t> whitespace_run(std::size_t pos) const {
    std::size_t n = 0, to_newline = 0;
    for (; class_at(pos + n) == CharClass::whitespace; ++n)
      if (is_newline(text_[pos + n])) to_newline = n + 1;
    return {n, to_newline};
  }

  // Appends the end of each word from `begin` to the piece's end.
  template <class WordLength>
  void split(std::size_t begin, std::vector<std::size_t>& ends, WordLength word_length) const {
    std::size_t pos = begin;
    while (pos < end_) {
      pos += word_length(pos);
      ends.push_back(pos);
    }
  }

  std::u32string_view text_;
  const std::vector<CharClass>& classes_;
  std::size_t end_;
};

// The GPT-2 pattern over a piece.
class Gpt2Splitter : Piece {
 public:
  using Piece::Piece;

  void split(std::size_t begin, std::vector<std::size_t>& ends) const {
    Piece::split(begin, ends, [this](std::size_t pos) { return word_length(pos); });
  }

 private:
  std::size_t word_length(std::size_t pos) const {
    if (const std::size_t n = contraction_length(pos, false)) return n;
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
    const std::size_t n = whitespace_run(pos).first;
    return n > 1 && pos + n < end_ ? n - 1 : n;
  }
};

// The Qwen2 pattern over the whole text.
class Qwen2Splitter : Piece {
 public:
  using Piece::Piece;

  void split(std::vector<std::size_t>& ends) const {
    Piece::split(0, ends, [this](std::size_t pos) { return word_length(pos); });
  }

 private:
  std::size_t word_length(std::size_t pos) const {
    if (const std::size_t n = contraction_length(pos, true)) return n;
    const char32_t c = text_[pos];
    const CharClass here = classes_[pos];
    // "[^\r\n\p{L}\p{N}]?\p{L}+": letters, after one character that is none of those.
    if (!is_newline(c) && here != CharClass::number &&
        (here == CharClass::letter || class_at(pos + 1) == CharClass::letter)) {
      std::size_t end = pos + 1;
      while (class_at(end) == CharClass::letter) ++end;
      return end - pos;
    }
    if (here == CharClass::number) return 1;  // "\p{N}"
    // " ?[^\s\p{L}\p{N}]+[\r\n]*"
    const bool space = c == U' ';
    if ((space ? class_at(pos + 1) : here) == CharClass::other) {
      std::size_t end = pos + (space ? 1 : 0);
      while (class_at(end) == CharClass::other) ++end;
      while (end < end_ && is_newline(text_[end])) ++end;
      return end - pos;
    }
    // "\s*[\r\n]+" up to the run's last newline, else "\s+(?!\S)|\s+" as GPT-2's.
    const auto [n, to_newline] = whitespace_run(pos);
    if (to_newline > 0) return to_newline;
    return n > 1 && pos + n < end_ ? n - 1 : n;
  }
};

std::vector<CharClass> classes_of(std::u32string_view text) {
  std::vector<CharClass> classes(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) classes[i] = char_class(text[i]);
  return classes;
}

void split_smollm(std::u32string_view text, std::vector<std::size_t>& ends) {
  const std::vector<CharClass> classes = classes_of(text);
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
  if (name == "qwen2") return PreTokenizer::qwen2;
  throw Error("pre-tokenizer " + quoted(name) +
              " (tokenizer.ggml.pre) is not supported; "
              "supported: smollm, qwen2");
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
    case PreTokenizer::qwen2: {
      const std::vector<CharClass> classes = classes_of(text);
      Qwen2Splitter(text, classes, text.size()).split(ends);
      break;
    }
  }
  return ends;
}

}  // namespace cocktail::models::detail
