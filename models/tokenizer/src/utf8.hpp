#pragma once

#include <string>
#include <string_view>

namespace cocktail::models::detail {

inline constexpr char32_t kReplacementCharacter = 0xFFFD;

// The codepoints of `text` as llama.cpp's tokenizer reads them. Its decoder is lenient: it
// takes overlong forms (C0 80 is U+0000) and surrogates as they come. A byte that does not
// begin a complete sequence becomes U+FFFD and reading goes on at the next byte; so does a
// four-byte sequence above U+10FFFF (llama.cpp throws on those).
std::u32string decode_utf8_lenient(std::string_view text);

// Appends the UTF-8 form of `cp` (at most U+10FFFF; surrogates are written as they are).
void append_utf8(std::string& out, char32_t cp);

// Bytes of the UTF-8 sequence that a byte announces when it leads one (2, 3 or 4); 0 for
// ASCII, continuation bytes and bytes that can lead nothing (F8-FF).
int utf8_sequence_length(unsigned char lead);

}  // namespace cocktail::models::detail
