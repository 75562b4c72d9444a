#include "byte_level.hpp"

#include <array>

namespace cocktail::models::detail {

namespace {

constexpr bool stands_for_itself(int b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

constexpr int kAlphabetEnd = 0x100 + 68;  // one past the last character of the alphabet

constexpr std::array<char32_t, 256> kCharOfByte = [] {
  std::array<char32_t, 256> chars{};
  char32_t next = 0x100;
  for (int b = 0; b < 256; ++b) chars[std::size_t(b)] = stands_for_itself(b) ? char32_t(b) : next++;
  return chars;
}();

constexpr std::array<int, kAlphabetEnd> kByteOfChar = [] {
  std::array<int, kAlphabetEnd> bytes{};
  bytes.fill(-1);
  for (int b = 0; b < 256; ++b) bytes[kCharOfByte[std::size_t(b)]] = b;
  return bytes;
}();

static_assert(kCharOfByte[' '] == 0x120 && kCharOfByte['\n'] == 0x10A &&
              kCharOfByte[0xAD] == 0x143);

}  // namespace

char32_t byte_to_char(unsigned char byte) {
  return kCharOfByte[byte];
}

std::optional<unsigned char> char_to_byte(char32_t c) {
  if (c >= char32_t(kAlphabetEnd) || kByteOfChar[c] < 0) return std::nullopt;
  return static_cast<unsigned char>(kByteOfChar[c]);
}

}  // namespace cocktail::models::detail
