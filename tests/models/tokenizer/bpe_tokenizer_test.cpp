#include "cocktail/models/bpe_tokenizer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "support/error_of.hpp"
#include "tiny_vocabulary.hpp"

namespace cocktail::models {
namespace {

using ::cocktail::testing::error_of;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TinyVocabulary;

using Ids = std::vector<TokenId>;
using namespace std::string_literals;

class BpeTokenizerTest : public ::testing::Test {
 protected:
  TinyVocabulary tiny;
  BpeTokenizer tok{tiny.v};

  TokenId id(std::string_view raw) const {
    const TokenId found = tiny.id(raw);
    EXPECT_GE(found, 0) << "no token for '" << raw << "'";
    return found;
  }
  Ids encode(std::string_view text) const { return tok.encode(text, false); }
};

TEST_F(BpeTokenizerTest, LowerRankMergesFirstEvenWhenItIsFurtherRight) {
  // "b c" (rank 3) goes before "a b" (rank 4), so "abc" can only come from a + bc (rank 5).
  EXPECT_THAT(encode("abc"), ElementsAre(id("abc")));
  EXPECT_THAT(encode("ab"), ElementsAre(id("ab")));
  // "h e" (rank 1) takes the h before "e ll" (rank 8) could: he + ll + o, never "hello".
  EXPECT_THAT(encode("hello"), ElementsAre(id("he"), id("ll"), id("o")));
  // Ġt (0), he (1), then Ġt + he (2).
  EXPECT_THAT(encode(" the"), ElementsAre(id(" the")));
  EXPECT_THAT(encode("the"), ElementsAre(id("t"), id("he")));
}

TEST_F(BpeTokenizerTest, EqualRanksMergeLeftmostFirst) {
  EXPECT_THAT(encode("aaa"), ElementsAre(id("aa"), id("a")));
  EXPECT_THAT(encode("aaaa"), ElementsAre(id("aa"), id("aa")));
}

TEST_F(BpeTokenizerTest, WordsMergeOnlyWithinThemselves) {
  // Every digit is its own word, so the merge "1 2" never applies.
  EXPECT_THAT(encode("12"), ElementsAre(id("1"), id("2")));
  // "it" and "'s" are separate words; "'s" merges.
  EXPECT_THAT(encode("it's"), ElementsAre(id("i"), id("t"), id("'s")));
  // Two spaces before a word: the first is a word alone, the second leads " the".
  EXPECT_THAT(encode("a  the"), ElementsAre(id("a"), id(" "), id(" the")));
  EXPECT_THAT(encode("a  "), ElementsAre(id("a"), id("  ")));
  EXPECT_THAT(encode("\n\n"), ElementsAre(id("\n\n")));
}

TEST_F(BpeTokenizerTest, BytesWithoutMergesStayByteTokens) {
  // é is C3 A9, merged; 日 (E6 97 A5) has no merges and stays three byte tokens.
  EXPECT_THAT(encode("é"), ElementsAre(id("\xC3\xA9")));
  EXPECT_EQ(encode("日"), TinyVocabulary::bytes("日"));
  EXPECT_EQ(encode("\x01\x7F"), TinyVocabulary::bytes("\x01\x7F"));
}

TEST_F(BpeTokenizerTest, ByteLevelAlphabetIsGpt2s) {
  // Known characters of GPT-2's alphabet, written out by hand.
  EXPECT_EQ(tok.find("\xC4\xA0"), TinyVocabulary::byte(' '));   // Ġ U+0120
  EXPECT_EQ(tok.find("\xC4\x8A"), TinyVocabulary::byte('\n'));  // Ċ U+010A
  EXPECT_EQ(tok.find("\xC4\x89"), TinyVocabulary::byte('\t'));  // ĉ U+0109
  EXPECT_EQ(tok.find("\xC4\x80"), TinyVocabulary::byte(0x00));  // Ā U+0100
  EXPECT_EQ(tok.find("\xC4\xA1"), TinyVocabulary::byte(0x7F));  // ġ U+0121
  EXPECT_EQ(tok.find("\xC5\x82"), TinyVocabulary::byte(0xA0));  // ł U+0142
  EXPECT_EQ(tok.find("\xC5\x83"), TinyVocabulary::byte(0xAD));  // Ń U+0143
  EXPECT_EQ(tok.find("A"), TinyVocabulary::byte('A'));          // printable ASCII is itself
  EXPECT_EQ(tok.find("\xC3\xA9"), TinyVocabulary::byte(0xE9));  // é U+00E9 is itself
  EXPECT_EQ(tok.token_piece(TinyVocabulary::byte(' '), false), " ");
  EXPECT_EQ(tok.token_piece(TinyVocabulary::byte(0xAD), false), "\xAD");
}

TEST_F(BpeTokenizerTest, SpecialTokensAreParsedOnlyWhenAsked) {
  const std::string chat = "<|im_start|>user\nHi<|im_end|>";
  Ids parsed = {1};
  for (const TokenId t : TinyVocabulary::bytes("user\nHi")) parsed.push_back(t);
  parsed.push_back(2);
  EXPECT_EQ(tok.encode(chat, true), parsed);
  // As text: no merge applies to these bytes, so one byte token each.
  EXPECT_EQ(tok.encode(chat, false), TinyVocabulary::bytes(chat));
  EXPECT_THAT(
      tok.encode("end<|endoftext|>start", true),
      ElementsAre(id("e"), id("n"), id("d"), 0, id("s"), id("t"), id("a"), id("r"), id("t")));
}

TEST_F(BpeTokenizerTest, UserDefinedTokensAreAlwaysParsed) {
  const Ids expected = {id("x"), 3, id("y")};
  EXPECT_EQ(tok.encode("x<tool>y", false), expected);
  EXPECT_EQ(tok.encode("x<tool>y", true), expected);
}

TEST_F(BpeTokenizerTest, LongerSpecialTokensWin) {
  TinyVocabulary v;
  const TokenId x = v.add("<x>", TokenType::control);
  const TokenId y = v.add("<y>", TokenType::control);
  const TokenId xy = v.add("<x><y>", TokenType::control);
  const BpeTokenizer t(v.v);
  EXPECT_THAT(t.encode("<x><y><x>", true), ElementsAre(xy, x));
  EXPECT_THAT(t.encode("<y><x><y>", true), ElementsAre(y, xy));
}

TEST_F(BpeTokenizerTest, PartialSpecialTokensAreText) {
  EXPECT_EQ(tok.encode("<|im_start <|im_end", true), TinyVocabulary::bytes("<|im_start <|im_end"));
}

TEST_F(BpeTokenizerTest, EmptyTextHasNoTokens) {
  EXPECT_TRUE(tok.encode("", true).empty());
  EXPECT_TRUE(tok.encode("", false, true).empty());  // add_bos is false
}

TEST_F(BpeTokenizerTest, AddSpecialPutsBosFirstWhenTheVocabularyAsks) {
  TinyVocabulary v;
  v.v.add_bos = true;
  const BpeTokenizer t(v.v);
  EXPECT_THAT(t.encode("a", false, true), ElementsAre(0, id("a")));
  EXPECT_THAT(t.encode("a", false, false), ElementsAre(id("a")));
  EXPECT_THAT(t.encode("", false, true), ElementsAre(0));
}

TEST_F(BpeTokenizerTest, RoundTripsValidUtf8) {
  const std::vector<std::string> texts = {
      "The quick brown fox jumps over the lazy dog.",
      "  leading, trailing and   multiple spaces  ",
      "tabs\tand\r\nwindows\nline endings\n\n\n",
      "It's what they're saying: we'll see, I'M sure you'VE heard.",
      "1234567 and 3.14159 on 2026-11-22, x² ½ Ⅻ ٣",
      "Café naïve résumé, Ångström, Straße, e\u0301",
      "Καλημέρα κόσμε! Привет, мир!",
      "你好，世界。日本語のテキスト、カタカナ。안녕하세요",
      "مرحبا بالعالم، नमस्ते दुनिया",
      "emoji 🍕🍕 👨\u200d👩\u200d👧 🏳️\u200d🌈 👍🏽 ❤️",
      "non\u00a0breaking, zero\u200bwidth, ideographic\u3000space, line\u2028sep",
      "\xEF\xBF\xBD is the replacement character, \xF4\x8F\xBF\xBF the last codepoint",
      "control \x01\x02\x1f\x7f and a NUL \0 inside"s,
  };
  for (const std::string& text : texts) {
    EXPECT_EQ(tok.decode(tok.encode(text, false), false), text) << text;
    EXPECT_EQ(tok.decode(tok.encode(text, true), true), text) << text;
  }
}

TEST_F(BpeTokenizerTest, RoundTripsSpecialTokensWhenRendered) {
  const std::string chat = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>assistant\n";
  const Ids ids = tok.encode(chat, true);
  EXPECT_EQ(tok.decode(ids, true), chat);
  EXPECT_EQ(tok.decode(ids, false), "system\nBe brief.\nassistant\n");
}

TEST_F(BpeTokenizerTest, InvalidUtf8BecomesReplacementCharactersAsInLlamaCpp) {
  const std::string fffd = "\xEF\xBF\xBD";
  const auto round_trip = [&](const std::string& text) {
    return tok.decode(tok.encode(text, false), false);
  };
  EXPECT_EQ(round_trip("\xFF"), fffd);
  EXPECT_EQ(round_trip("a\x80z"), "a" + fffd + "z");  // stray continuation byte
  EXPECT_EQ(round_trip("\xE2\x82"), fffd + fffd);     // cut short: one per byte
  EXPECT_EQ(round_trip("\xE2\x82z"), fffd + fffd + "z");
  EXPECT_EQ(round_trip("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // above U+10FFFF
  EXPECT_EQ(round_trip("\xF8\x88"), fffd + fffd);
  // llama.cpp's reader is lenient: overlong forms are read as the character they spell, and
  // surrogates pass.
  EXPECT_EQ(round_trip("\xC0\x80"), std::string(1, '\0'));
  EXPECT_EQ(round_trip("\xC1\xBF"), "\x7F");
  EXPECT_EQ(round_trip("\xED\xA0\x80"), "\xED\xA0\x80");
  // The replacement character is encoded like any other text.
  EXPECT_EQ(tok.encode("\xFF", false), tok.encode(fffd, false));
}

TEST(BpeTokenizerDropTest, BytesWithoutATokenAreDroppedAsInLlamaCpp) {
  TinyVocabulary v(0x04);
  const BpeTokenizer tok(v.v);
  EXPECT_THAT(tok.encode("a\x04z", false), ElementsAre(v.id("a"), v.id("z")));
  EXPECT_TRUE(tok.encode("\x04", false).empty());
  // A dropped byte still separates its neighbours: "a" and "b" do not merge across it.
  EXPECT_THAT(tok.encode("!\x04!", false), ElementsAre(v.id("!"), v.id("!")));
  EXPECT_THAT(tok.encode("a\x04"
                         "b",
                         false),
              ElementsAre(v.id("a"), v.id("b")));
}

TEST_F(BpeTokenizerTest, PiecesByTokenType) {
  TinyVocabulary v;
  const TokenId byte_a = v.add("<0x41>", TokenType::byte);
  const TokenId byte_hi = v.add("<0xfe>", TokenType::byte);
  const TokenId unused = v.add("<unused0>", TokenType::unused);
  const TokenId unknown = v.add("<unk>", TokenType::unknown);
  const BpeTokenizer t(v.v);
  EXPECT_EQ(t.token_piece(byte_a, false), "A");
  EXPECT_EQ(t.token_piece(byte_hi, false), "\xFE");
  EXPECT_EQ(t.token_piece(unused, true), "");
  EXPECT_EQ(t.token_piece(unknown, false), "");
  EXPECT_EQ(t.token_piece(unknown, true), "<unk>");
  EXPECT_EQ(t.token_piece(1, false), "");
  EXPECT_EQ(t.token_piece(1, true), "<|im_start|>");
  EXPECT_EQ(t.token_piece(3, false), "<tool>");
  EXPECT_EQ(t.token_piece(v.id(" the"), false), " the");
  EXPECT_EQ(t.decode(std::vector<TokenId>{byte_a, v.id("bc"), 2, byte_hi}, false), "Abc\xFE");
}

TEST_F(BpeTokenizerTest, IdsOutOfRangeAreErrors) {
  const auto size = TokenId(tok.size());
  EXPECT_THAT(error_of<Error>([&] { (void)tok.token_piece(size, false); }),
              AllOf(HasSubstr("token id " + std::to_string(size)), HasSubstr("out of range")));
  EXPECT_THAT(error_of<Error>([&] { (void)tok.token_piece(-1, true); }), HasSubstr("token id -1"));
  EXPECT_THAT(error_of<Error>([&] {
                (void)tok.decode(std::vector<TokenId>{5, 6, size + 3}, false);
              }),
              AllOf(HasSubstr("position 2"), HasSubstr(std::to_string(size + 3))));
}

TEST_F(BpeTokenizerTest, FindsTokensByExactText) {
  EXPECT_EQ(tok.find("<|im_end|>"), 2);
  EXPECT_EQ(tok.find("<tool>"), 3);
  EXPECT_EQ(tok.find("<|im_end"), std::nullopt);
  EXPECT_EQ(tok.size(), tiny.v.tokens.size());
  EXPECT_EQ(tok.vocabulary().merges, tiny.v.merges);
}

TEST(BpeTokenizerErrorTest, UnknownPreTokenizerListsTheSupportedOnes) {
  TinyVocabulary v;
  v.v.pre_tokenizer = "llama3";
  EXPECT_THAT(error_of<Error>([&] { BpeTokenizer{v.v}; }),
              AllOf(HasSubstr("'llama3'"), HasSubstr("tokenizer.ggml.pre"), HasSubstr("smollm")));
}

TEST(BpeTokenizerErrorTest, InvalidVocabularyIsRejected) {
  TinyVocabulary v;
  v.v.merges.push_back("q nope");
  EXPECT_THAT(error_of<Error>([&] { BpeTokenizer{v.v}; }),
              AllOf(HasSubstr("merge " + std::to_string(v.v.merges.size() - 1)),
                    HasSubstr("'nope' is not a token")));
}

TEST(BpeTokenizerErrorTest, NormalTokensMustBeByteLevelText) {
  TinyVocabulary v;
  const TokenId bad = v.add("日本", TokenType::normal);
  EXPECT_THAT(error_of<Error>([&] { BpeTokenizer{v.v}; }),
              AllOf(HasSubstr("token " + std::to_string(bad)), HasSubstr("U+65E5"),
                    HasSubstr("byte-level alphabet")));
}

TEST(BpeTokenizerErrorTest, ByteTokensMustBeHexBytes) {
  for (const std::string text : {"<0xZZ>", "<0x4>", "0x41", "<0x411>"}) {
    TinyVocabulary v;
    const TokenId bad = v.add(text, TokenType::byte);
    EXPECT_THAT(error_of<Error>([&] { BpeTokenizer{v.v}; }),
                AllOf(HasSubstr("token " + std::to_string(bad)), HasSubstr("not <0xAB>")))
        << text;
  }
}

TEST_F(BpeTokenizerTest, CopiesShareTablesAndAgree) {
  const BpeTokenizer copy = tok;
  EXPECT_EQ(copy.encode("hello the abc", false), tok.encode("hello the abc", false));
  EXPECT_EQ(&copy.vocabulary(), &tok.vocabulary());
}

}  // namespace
}  // namespace cocktail::models
