#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace cocktail::models::detail {

// Pre-tokenizers by tokenizer.ggml.pre, as llama.cpp splits text for them:
//  - "smollm" (SmolLM, SmolLM2): first \p{N} (every number character is a word of its own),
//    then within each piece GPT-2's
//    's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+;
//  - "qwen2" (Qwen2, Qwen2.5): (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|
//    ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ (Llama 3's, with one digit a word).
enum class PreTokenizer { smollm, qwen2 };

// Throws cocktail::Error naming `name` and listing the supported names.
PreTokenizer pre_tokenizer_named(std::string_view name);

// What the patterns see of a character, from the Unicode general category (ICU): letter (L*),
// number (N*), whitespace (llama.cpp's set, Unicode's White_Space: \t-\r, space, U+0085,
// U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000) or anything else,
// unassigned characters included.
enum class CharClass : unsigned char { letter, number, whitespace, other };
CharClass char_class(char32_t cp);

// The words of `text`, as the end offset of each (exclusive, in codepoints), in order:
// concatenated they give the text back.
std::vector<std::size_t> split_words(PreTokenizer kind, std::u32string_view text);

}  // namespace cocktail::models::detail
