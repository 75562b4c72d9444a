#pragma once

#include <optional>

namespace cocktail::models::detail {

// GPT-2's byte-level alphabet: each of the 256 byte values has its own printable character, so
// byte-level BPE tokens are text. Printable Latin-1 bytes stand for themselves; the other 68
// (controls, space, DEL, 0x80-0xA0, soft hyphen) take U+0100 onwards in byte order, so a
// space is 'Ġ' (U+0120) and a newline 'Ċ' (U+010A).
char32_t byte_to_char(unsigned char byte);

// The byte that `c` stands for; nullopt for a character outside the alphabet.
std::optional<unsigned char> char_to_byte(char32_t c);

}  // namespace cocktail::models::detail
