#include "cocktail/models/utf8_stream.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cocktail/models/bpe_tokenizer.hpp"
#include "tiny_vocabulary.hpp"

namespace cocktail::models {
namespace {

using testing::TinyVocabulary;

TEST(Utf8StreamTest, HoldsASplitCharacterUntilItIsWhole) {
  Utf8Stream s;
  EXPECT_EQ(s.push("\xC3"), "");
  EXPECT_EQ(s.push("\xA9"), "é");
  EXPECT_EQ(s.push("\xF0"), "");
  EXPECT_EQ(s.push("\x9F"), "");
  EXPECT_EQ(s.push("\x8D"), "");
  EXPECT_EQ(s.push("\x95"), "🍕");
  EXPECT_EQ(s.finish(), "");
}

TEST(Utf8StreamTest, GivesWhatIsCompleteAndKeepsTheRest) {
  Utf8Stream s;
  EXPECT_EQ(s.push("ab\xE2\x82"), "ab");
  EXPECT_EQ(s.push("\xAC and \xF0\x9F"), "€ and ");
  EXPECT_EQ(s.push("\x8D\x95!"), "🍕!");
}

TEST(Utf8StreamTest, InvalidBytesPassStraightThrough) {
  Utf8Stream s;
  EXPECT_EQ(s.push("\xFF"), "\xFF");
  EXPECT_EQ(s.push("\x80"), "\x80");
  EXPECT_EQ(s.push("\xF8\x88"), "\xF8\x88");
  // A character cut off by a byte that cannot continue it is given as it is.
  EXPECT_EQ(s.push("\xE2"), "");
  EXPECT_EQ(s.push("A"),
            "\xE2"
            "A");
}

TEST(Utf8StreamTest, FinishGivesAnUnfinishedCharacterAsItIs) {
  Utf8Stream s;
  EXPECT_EQ(s.push("x\xF0\x9F"), "x");
  EXPECT_EQ(s.finish(), "\xF0\x9F");
  EXPECT_EQ(s.finish(), "");
  EXPECT_EQ(s.push("y"), "y");
}

TEST(Utf8StreamTest, StreamsTokensIntoWholeCharacters) {
  // With the tiny vocabulary most of these characters are several byte tokens.
  const BpeTokenizer tok(TinyVocabulary().v);
  const std::string text = "héllo 日本 🍕 the end\xE2\x82";
  Utf8Stream s;
  std::string joined;
  for (const TokenId id : tok.encode(text, false)) {
    const std::string out = s.push(tok.token_piece(id, false));
    // Every output ends on a character boundary: its last lead byte has all its bytes.
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto c = static_cast<unsigned char>(out[i]);
      const std::size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      EXPECT_LE(i + need, out.size()) << "cut inside a character: " << out;
    }
    joined += out;
  }
  joined += s.finish();
  EXPECT_EQ(joined, tok.decode(tok.encode(text, false), false));
}

}  // namespace
}  // namespace cocktail::models
