#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "byte_level.hpp"
#include "cocktail/models/vocabulary.hpp"
#include "utf8.hpp"

namespace cocktail::models::testing {

// The byte-level text of raw bytes: one alphabet character per byte.
inline std::string byte_level(std::string_view bytes) {
  std::string text;
  for (const char b : bytes)
    detail::append_utf8(text, detail::byte_to_char(static_cast<unsigned char>(b)));
  return text;
}

// A small vocabulary with hand-picked merges:
//   0 <|endoftext|> control, 1 <|im_start|> control, 2 <|im_end|> control, 3 <tool> user-defined,
//   4 + b: the byte-level character of byte b (all 256 unless `missing_byte` is one of them),
//   then the merged tokens, which add_merge() appends.
class TinyVocabulary {
 public:
  static constexpr TokenId kFirstByte = 4;

  explicit TinyVocabulary(int missing_byte = -1) {
    v.pre_tokenizer = "smollm";
    add("<|endoftext|>", TokenType::control);
    add("<|im_start|>", TokenType::control);
    add("<|im_end|>", TokenType::control);
    add("<tool>", TokenType::user_defined);
    for (int b = 0; b < 256; ++b) {
      // A missing byte keeps its id: the slot holds an unused token instead.
      if (b == missing_byte) {
        add("<unused-" + std::to_string(b) + ">", TokenType::unused);
      } else {
        add(byte_level(std::string(1, char(b))), TokenType::normal);
      }
    }
    v.bos = 0;
    v.eos = 2;
    // Ranks in this order.
    add_merge(" ", "t");    // Ġt
    add_merge("h", "e");    // he
    add_merge(" t", "he");  // Ġthe
    add_merge("b", "c");
    add_merge("a", "b");
    add_merge("a", "bc");
    add_merge("a", "a");
    add_merge("l", "l");
    add_merge("e", "ll");
    add_merge("h", "ell");
    add_merge("hell", "o");
    add_merge(" ", " ");
    add_merge("\n", "\n");
    add_merge("'", "s");
    add_merge("1", "2");        // never used: every digit is a word of its own
    add_merge("\xC3", "\xA9");  // é
  }

  // Appends the merge of two raw-byte strings, and their concatenation as a token if new.
  void add_merge(std::string_view left, std::string_view right) {
    const std::string joined = byte_level(std::string(left) + std::string(right));
    if (id(std::string(left) + std::string(right)) < 0) add(joined, TokenType::normal);
    v.merges.push_back(byte_level(left) + " " + byte_level(right));
  }

  TokenId add(std::string text, TokenType type) {
    v.tokens.push_back(std::move(text));
    v.types.push_back(type);
    return TokenId(v.tokens.size() - 1);
  }

  // The id of the normal token for raw bytes, -1 when there is none.
  TokenId id(std::string_view raw) const {
    const std::string text = byte_level(raw);
    for (std::size_t i = 0; i < v.tokens.size(); ++i) {
      if (v.tokens[i] == text && v.types[i] == TokenType::normal) return TokenId(i);
    }
    return -1;
  }

  static TokenId byte(unsigned char b) { return kFirstByte + b; }

  // One byte token per byte of `raw`.
  static std::vector<TokenId> bytes(std::string_view raw) {
    std::vector<TokenId> ids;
    for (const char c : raw) ids.push_back(byte(static_cast<unsigned char>(c)));
    return ids;
  }

  Vocabulary v;
};

}  // namespace cocktail::models::testing
