#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cocktail::models {

using TokenId = std::int32_t;

// A token's type, with GGUF's ids (tokenizer.ggml.token_type), so the GGUF glue can cast.
enum class TokenType : std::int32_t {
  normal = 1,   // byte-level BPE text
  unknown = 2,  // the unknown token
  control = 3,  // <|im_start|> and the like: parsed from text only on request, hidden on output
  user_defined = 4,  // added tokens: always parsed from text, always shown on output
  unused = 5,        // never produced, shown as nothing
  byte = 6,          // "<0xAB>": one raw byte
};

// A tokenizer vocabulary as plain data, as the GGUF keys tokenizer.ggml.* hold it.
struct Vocabulary {
  std::vector<std::string> tokens;  // token text by id
  std::vector<TokenType> types;     // one per token
  std::vector<std::string> merges;  // "left right", the rank is the index (0 merges first)
  std::optional<TokenId> bos;
  std::optional<TokenId> eos;
  std::optional<TokenId> unk;
  std::optional<TokenId> pad;
  bool add_bos = false;       // the model wants BOS before a prompt
  std::string pre_tokenizer;  // tokenizer.ggml.pre, e.g. "smollm"

  // Throws cocktail::Error naming the first problem: a type list of another length or an
  // unknown type value, an empty or repeated token text, a special id out of range, add_bos
  // without bos, or a merge (by index) that is not "left right" over known tokens whose
  // concatenation is a token too, or that repeats an earlier merge.
  void validate() const;
};

}  // namespace cocktail::models
