#include "pre_tokenizer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "support/error_of.hpp"
#include "utf8.hpp"

namespace cocktail::models::detail {
namespace {

using ::cocktail::testing::error_of;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The words of a UTF-8 text under a pre-tokenizer (smollm unless named).
std::vector<std::string> words(std::string_view text, PreTokenizer kind = PreTokenizer::smollm) {
  const std::u32string cps = decode_utf8_lenient(text);
  std::vector<std::string> out;
  std::size_t begin = 0;
  for (const std::size_t end : split_words(kind, cps)) {
    std::string word;
    for (std::size_t i = begin; i < end; ++i) append_utf8(word, cps[i]);
    out.push_back(word);
    begin = end;
  }
  return out;
}

TEST(PreTokenizerTest, SpacesJoinTheWordAfterThem) {
  EXPECT_THAT(words("Hello world"), ElementsAre("Hello", " world"));
  EXPECT_THAT(words(" leading space"), ElementsAre(" leading", " space"));
  EXPECT_THAT(words("  two"), ElementsAre(" ", " two"));
  EXPECT_THAT(words("a   b"), ElementsAre("a", "  ", " b"));
  EXPECT_THAT(words("trailing   "), ElementsAre("trailing", "   "));
  EXPECT_THAT(words(" "), ElementsAre(" "));
  EXPECT_TRUE(words("").empty());
}

TEST(PreTokenizerTest, Contractions) {
  EXPECT_THAT(words("It's they're we'll I've he'd I'm can't"),
              ElementsAre("It", "'s", " they", "'re", " we", "'ll", " I", "'ve", " he", "'d", " I",
                          "'m", " can", "'t"));
  // Only lowercase contractions: "'M" is punctuation then a letter.
  EXPECT_THAT(words("I'M you'VE"), ElementsAre("I", "'", "M", " you", "'", "VE"));
  // A quote that starts no contraction is punctuation, with the space before it.
  EXPECT_THAT(words("'quoted' rock'n'roll"),
              ElementsAre("'", "quoted", "'", " rock", "'", "n", "'", "roll"));
  EXPECT_THAT(words("y'all 'sup"), ElementsAre("y", "'", "all", " '", "sup"));
}

TEST(PreTokenizerTest, EveryNumberCharacterIsAWordOfItsOwn) {
  EXPECT_THAT(words("abc 123 4.5"), ElementsAre("abc", " ", "1", "2", "3", " ", "4", ".", "5"));
  EXPECT_THAT(words("x1y"), ElementsAre("x", "1", "y"));
  // Superscripts, fractions, Roman numerals and Arabic-Indic digits are \p{N} too.
  EXPECT_THAT(words("x²½Ⅻ٣"), ElementsAre("x", "²", "½", "Ⅻ", "٣"));
  // A number cuts the text in two: "a " ends its piece, so its space stays alone.
  EXPECT_THAT(words("a 1"), ElementsAre("a", " ", "1"));
}

TEST(PreTokenizerTest, NewlinesAndTabs) {
  EXPECT_THAT(words("line one\nline two"), ElementsAre("line", " one", "\n", "line", " two"));
  EXPECT_THAT(words("a\n\nb"), ElementsAre("a", "\n", "\n", "b"));
  EXPECT_THAT(words("a\n\n"), ElementsAre("a", "\n\n"));
  EXPECT_THAT(words("a \nb"), ElementsAre("a", " ", "\n", "b"));
  EXPECT_THAT(words("\tx\r\n"), ElementsAre("\t", "x", "\r\n"));
  EXPECT_THAT(words("    indented"), ElementsAre("   ", " indented"));
}

TEST(PreTokenizerTest, PunctuationRuns) {
  EXPECT_THAT(words("Wait... what?!"), ElementsAre("Wait", "...", " what", "?!"));
  EXPECT_THAT(words(" (hi) ;;"), ElementsAre(" (", "hi", ")", " ;;"));
  EXPECT_THAT(words("a_b"), ElementsAre("a", "_", "b"));
  EXPECT_THAT(words("x->y"), ElementsAre("x", "->", "y"));
}

TEST(PreTokenizerTest, NonAsciiLetters) {
  EXPECT_THAT(words("Café naïve Straße"), ElementsAre("Café", " naïve", " Straße"));
  EXPECT_THAT(words("Καλημέρα κόσμε"), ElementsAre("Καλημέρα", " κόσμε"));
  EXPECT_THAT(words("Привет, мир!"), ElementsAre("Привет", ",", " мир", "!"));
  // A combining mark is not a letter (\p{M}): it leaves the word it follows.
  EXPECT_THAT(words("e\u0301t"), ElementsAre("e", "\u0301", "t"));
}

TEST(PreTokenizerTest, Cjk) {
  EXPECT_THAT(words("你好，世界。"), ElementsAre("你好", "，", "世界", "。"));
  EXPECT_THAT(words("日本語のテキスト"), ElementsAre("日本語のテキスト"));
  EXPECT_THAT(words("안녕 세계"), ElementsAre("안녕", " 세계"));
}

TEST(PreTokenizerTest, EmojiAreSymbols) {
  EXPECT_THAT(words("I love 🍕🍕!"), ElementsAre("I", " love", " 🍕🍕!"));
  // ZWJ (a format character) and variation selectors (marks) join the symbol run.
  EXPECT_THAT(words("👨\u200d👩 ❤\uFE0F"), ElementsAre("👨\u200d👩", " ❤\uFE0F"));
}

TEST(PreTokenizerTest, UnicodeWhitespace) {
  // No-break space is whitespace but not the space that may lead a word.
  EXPECT_THAT(words("a\u00a0b"), ElementsAre("a", "\u00a0", "b"));
  EXPECT_THAT(words("a \u00a0b"), ElementsAre("a", " ", "\u00a0", "b"));
  EXPECT_THAT(words("a\u3000\u2003b"), ElementsAre("a", "\u3000", "\u2003", "b"));
  // Zero width space is a format character, not whitespace.
  EXPECT_THAT(words("zero\u200bwidth"), ElementsAre("zero", "\u200b", "width"));
}

TEST(PreTokenizerTest, CharacterClasses) {
  EXPECT_EQ(char_class(U'a'), CharClass::letter);
  EXPECT_EQ(char_class(U'\u00e9'), CharClass::letter);
  EXPECT_EQ(char_class(U'\u4e16'), CharClass::letter);  // 世
  EXPECT_EQ(char_class(U'7'), CharClass::number);
  EXPECT_EQ(char_class(U'\u2163'), CharClass::number);  // Ⅳ, a letter number
  for (const char32_t ws :
       {U' ', U'\t', U'\n', U'\v', U'\f', U'\r', U'\u0085', U'\u00a0', U'\u1680', U'\u2000',
        U'\u200a', U'\u2028', U'\u2029', U'\u202f', U'\u205f', U'\u3000'}) {
    EXPECT_EQ(char_class(ws), CharClass::whitespace) << std::uint32_t(ws);
  }
  // Not whitespace to llama.cpp (Python's \s would say otherwise for 0x1C-0x1F).
  EXPECT_EQ(char_class(U'\x1c'), CharClass::other);
  EXPECT_EQ(char_class(U'\u200b'), CharClass::other);
  EXPECT_EQ(char_class(U'!'), CharClass::other);
  EXPECT_EQ(char_class(U'\U0001F355'), CharClass::other);  // 🍕
  EXPECT_EQ(char_class(U'\U000E0080'), CharClass::other);  // unassigned
  EXPECT_EQ(char_class(U'\xD800'), CharClass::other);      // a surrogate
}

std::vector<std::string> qwen2_words(std::string_view text) {
  return words(text, PreTokenizer::qwen2);
}

// Qwen2's pattern: one character that is no letter, digit or newline may lead a run of letters.
TEST(Qwen2PreTokenizerTest, LettersTakeTheCharacterBeforeThem) {
  EXPECT_THAT(qwen2_words("Hello world"), ElementsAre("Hello", " world"));
  EXPECT_THAT(qwen2_words("a.append(x)"), ElementsAre("a", ".append", "(x", ")"));
  EXPECT_THAT(qwen2_words("\tab\nnew"), ElementsAre("\tab", "\n", "new"));
  EXPECT_THAT(qwen2_words("  two"), ElementsAre(" ", " two"));
  EXPECT_THAT(qwen2_words("Café Straße"), ElementsAre("Café", " Straße"));
  EXPECT_TRUE(qwen2_words("").empty());
}

TEST(Qwen2PreTokenizerTest, ContractionsInEitherCase) {
  EXPECT_THAT(qwen2_words("I'M you'VE it's"), ElementsAre("I", "'M", " you", "'VE", " it", "'s"));
  // A contraction ends its word: letters after it start the next one.
  EXPECT_THAT(qwen2_words("'Sup I'Mma WE'LLsee"),
              ElementsAre("'S", "up", " I", "'M", "ma", " WE", "'LL", "see"));
  EXPECT_THAT(qwen2_words("rock'n'roll"), ElementsAre("rock", "'n", "'roll"));
}

TEST(Qwen2PreTokenizerTest, EveryDigitIsAWordOfItsOwn) {
  EXPECT_THAT(qwen2_words("x 123 4.5"), ElementsAre("x", " ", "1", "2", "3", " ", "4", ".", "5"));
  EXPECT_THAT(qwen2_words("x²"), ElementsAre("x", "²"));
}

// Punctuation takes one space before it and the newlines after it; whitespace runs end at their
// last newline.
TEST(Qwen2PreTokenizerTest, PunctuationAndNewlines) {
  EXPECT_THAT(qwen2_words("Wait... what?!\n\nNext"),
              ElementsAre("Wait", "...", " what", "?!\n\n", "Next"));
  EXPECT_THAT(qwen2_words("x = {\n    y;\n}"),
              ElementsAre("x", " =", " {\n", "   ", " y", ";\n", "}"));
  EXPECT_THAT(qwen2_words("a \n \n  b"), ElementsAre("a", " \n \n", " ", " b"));
  EXPECT_THAT(qwen2_words("a\r\n"), ElementsAre("a", "\r\n"));
  EXPECT_THAT(qwen2_words("end   "), ElementsAre("end", "   "));
  EXPECT_THAT(qwen2_words("I love 🍕🍕!"), ElementsAre("I", " love", " 🍕🍕!"));
}

TEST(PreTokenizerTest, UnknownNameListsTheSupportedOnes) {
  EXPECT_EQ(pre_tokenizer_named("smollm"), PreTokenizer::smollm);
  EXPECT_EQ(pre_tokenizer_named("qwen2"), PreTokenizer::qwen2);
  EXPECT_THAT(error_of<Error>([] { pre_tokenizer_named("gpt-2"); }),
              AllOf(HasSubstr("'gpt-2'"), HasSubstr("supported: smollm, qwen2")));
}

TEST(Utf8Test, DecodesLikeLlamaCpp) {
  EXPECT_EQ(decode_utf8_lenient("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x8D\x95"), U"aé€🍕");
  EXPECT_EQ(decode_utf8_lenient("\xFF\x80"), U"\uFFFD\uFFFD");
  EXPECT_EQ(decode_utf8_lenient("\xE2\x82"
                                "a"),
            U"\uFFFD\uFFFDa");
  EXPECT_EQ(decode_utf8_lenient("\xC0\x80"), std::u32string(1, U'\0'));
  EXPECT_EQ(decode_utf8_lenient("\xED\xA0\x80"), std::u32string(1, char32_t(0xD800)));
  EXPECT_EQ(decode_utf8_lenient("\xF4\x8F\xBF\xBF"), U"\U0010FFFF");
  EXPECT_EQ(decode_utf8_lenient("\xF4\x90\x80\x80"), U"\uFFFD\uFFFD\uFFFD\uFFFD");
  EXPECT_EQ(decode_utf8_lenient("\xEF\xBF\xBD"), U"\uFFFD");
}

TEST(Utf8Test, EncodesEveryLength) {
  std::string out;
  for (const char32_t cp : {U'A', U'é', U'€', U'🍕', char32_t(0xD800)}) append_utf8(out, cp);
  EXPECT_EQ(out, "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x8D\x95\xED\xA0\x80");
}

}  // namespace
}  // namespace cocktail::models::detail
