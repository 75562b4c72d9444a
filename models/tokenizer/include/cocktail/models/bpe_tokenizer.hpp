#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/models/vocabulary.hpp"

namespace cocktail::models {

// The text of a byte's token in a byte-level BPE vocabulary: the byte's character in GPT-2's
// byte-level alphabet, as UTF-8 ("A" for 'A', "Ġ" for a space). A vocabulary that holds all 256
// of them as normal tokens encodes any text, with no merges needed.
std::string byte_level_token(unsigned char byte);

// Byte-level BPE as llama.cpp runs it for tokenizer.ggml.model = "gpt2", with the
// pre-tokenizer that Vocabulary::pre_tokenizer names (supported: "smollm", "qwen2"). Copies share
// their immutable tables, and every method is safe to call from several threads at once.
class BpeTokenizer {
 public:
  // Throws cocktail::Error when the vocabulary does not validate (Vocabulary::validate), names
  // an unsupported pre-tokenizer, has a normal token with a character outside GPT-2's
  // byte-level alphabet, or a byte token that is not "<0xAB>".
  explicit BpeTokenizer(Vocabulary vocabulary);

  const Vocabulary& vocabulary() const;
  std::size_t size() const;  // number of tokens
  // The token whose text is exactly `text`, of any type.
  std::optional<TokenId> find(std::string_view text) const;

  // The tokens of `text`, as llama.cpp's llama_tokenize(text, add_special, parse_special)
  // gives them. Special tokens first: user-defined tokens written in the text become their ids;
  // with parse_special so do control and unknown tokens (<|im_start|>); longer ones are found
  // first. The rest is pre-tokenized into words, and each word's bytes merge by rank, lowest
  // first and leftmost among equals. add_special puts BOS first when the vocabulary's add_bos
  // asks for it.
  //
  // Text is read as llama.cpp reads it: a byte that begins no complete UTF-8 sequence becomes
  // U+FFFD, overlong forms are taken as the character they spell (C0 80 as U+0000). So
  // decode(encode(x)) is x for valid UTF-8, and x with such bytes replaced otherwise. A byte
  // whose byte-level character is not a token (SmolLM2 lacks a few, such as 0x04) cannot be
  // encoded: like llama.cpp, encode drops it, and it logs a warning that says so.
  std::vector<TokenId> encode(std::string_view text, bool parse_special,
                              bool add_special = false) const;

  // The bytes of one token: a normal token's characters mapped back to bytes, a byte token's
  // byte, a user-defined token's text; a control or unknown token's text when render_special,
  // else nothing; an unused token gives nothing. Valid while the tokenizer lives. Throws for
  // an id out of range. A piece can end inside a UTF-8 character: see Utf8Stream.
  std::string_view token_piece(TokenId id, bool render_special) const;

  // The pieces of `ids`, concatenated. Throws for an id out of range, naming its position.
  std::string decode(std::span<const TokenId> ids, bool render_special) const;

 private:
  struct Tables;
  std::shared_ptr<const Tables> tables_;
};

}  // namespace cocktail::models
