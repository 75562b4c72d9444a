// Arbitrary bytes through the byte-level BPE tokenizer (the tests' tiny vocabulary: special
// tokens, all 256 byte characters, a few merges), with each pre-tokenizer. Encoding must not fail,
// every id must be in range, and decoding must give the text back wherever the tokenizer promises
// it: for text that its lenient UTF-8 reading takes as it is (no stray bytes, no overlong forms).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "cocktail/logging.hpp"
#include "cocktail/models/bpe_tokenizer.hpp"
#include "tiny_vocabulary.hpp"
#include "utf8.hpp"

namespace {

using cocktail::models::BpeTokenizer;

BpeTokenizer tiny_tokenizer(const char* pre_tokenizer) {
  cocktail::set_log_level("off");
  cocktail::models::Vocabulary v = cocktail::models::testing::TinyVocabulary().v;
  v.pre_tokenizer = pre_tokenizer;
  return BpeTokenizer(std::move(v));
}

bool reads_as_written(std::string_view text) {
  std::string again;
  for (const char32_t c : cocktail::models::detail::decode_utf8_lenient(text)) {
    cocktail::models::detail::append_utf8(again, c);
  }
  return again == text;
}

void check_round_trip(const BpeTokenizer& tokenizer, std::string_view text, bool special) {
  const std::vector<cocktail::models::TokenId> ids = tokenizer.encode(text, special);
  const std::string decoded = tokenizer.decode(ids, special);
  if (reads_as_written(text) && decoded != text) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const BpeTokenizer tokenizers[] = {tiny_tokenizer("smollm"), tiny_tokenizer("qwen2")};
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const BpeTokenizer& tokenizer : tokenizers) {
    check_round_trip(tokenizer, text, false);
    check_round_trip(tokenizer, text, true);
  }
  return 0;
}
