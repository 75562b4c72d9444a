// Arbitrary bytes through the WordPiece tokenizer on a small vocabulary: the first byte picks
// the token limit, the rest is the text. Encoding must not fail and must give [CLS], pieces
// in range, [SEP], within the limit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/models/wordpiece_tokenizer.hpp"

namespace {

using cocktail::models::WordPieceTokenizer;

constexpr WordPieceTokenizer::TokenId kCls = 2;
constexpr WordPieceTokenizer::TokenId kSep = 3;

const WordPieceTokenizer& tokenizer() {
  static const WordPieceTokenizer instance(
      {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un",  "##aff", "##able", "aff",
       "able",  "!",     "##!",   "cafe",  ",",      "中",  "naive", "the",    "##s",
       "a",     "##a",   "é",     "##é",   "ß",      "##1", "1"},
      "fuzz vocabulary");
  return instance;
}

void check_encoding(const std::vector<WordPieceTokenizer::TokenId>& ids, std::size_t limit) {
  if (ids.size() < 2 || ids.size() > limit) std::abort();
  if (ids.front() != kCls || ids.back() != kSep) std::abort();
  for (const auto id : ids) {
    if (id < 0 || std::size_t(id) >= tokenizer().size()) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t limit = 2 + data[0] % 64;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  check_encoding(tokenizer().encode(text, limit), limit);
  for (const std::string& word : WordPieceTokenizer::words(text)) {
    if (word.empty()) std::abort();
  }
  return 0;
}
