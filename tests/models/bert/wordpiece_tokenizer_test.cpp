// WordPiece on a tiny hand-made vocabulary: each rule of Hugging Face's BertTokenizer (uncased)
// on its own. Expected ids are worked out by hand from the vocabulary below.
#include "cocktail/models/wordpiece_tokenizer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../gguf/gguf_writer.hpp"
#include "cocktail/error.hpp"
#include "support/error_of.hpp"

namespace cocktail::models {
namespace {

using ::testing::HasSubstr;
using Ids = std::vector<WordPieceTokenizer::TokenId>;
using Words = std::vector<std::string>;

const std::vector<std::string> kVocab = {"[PAD]", "[UNK]", "[CLS]",  "[SEP]", "[MASK]",  // 0 to 4
                                         "un",    "##aff", "##able", "aff",   "able",    // 5 to 9
                                         "!",     "##!",   "cafe",   ",",     "中",      // 10 to 14
                                         "naive", "the",   "##s",    "a",     "##a"};    // 15 to 19

WordPieceTokenizer tiny() {
  return WordPieceTokenizer(kVocab, "tiny vocab");
}

TEST(WordPiece, GreedyLongestMatchWithContinuations) {
  const WordPieceTokenizer t = tiny();
  EXPECT_EQ(t.encode("unaffable", 64), (Ids{2, 5, 6, 7, 3}));
  EXPECT_EQ(t.encode("affable the", 64), (Ids{2, 8, 7, 16, 3}));
  // "aa": "a" then "##a"; "aaa" likewise; "thes" takes "the" + "##s".
  EXPECT_EQ(t.encode("aa aaa thes", 64), (Ids{2, 18, 19, 18, 19, 19, 16, 17, 3}));
  // A word with a part no piece matches is one [UNK], not a partial match.
  EXPECT_EQ(t.encode("unaffablex the", 64), (Ids{2, 1, 16, 3}));
  EXPECT_EQ(t.token(6), "##aff");
  EXPECT_EQ(t.size(), kVocab.size());
}

TEST(WordPiece, CleansTextAndSplitsOnWhitespaceAndPunctuation) {
  EXPECT_EQ(WordPieceTokenizer::words("  Hello,\tWORLD!!\n"),
            (Words{"hello", ",", "world", "!", "!"}));
  // Control and format characters vanish without splitting; NUL and U+FFFD too.
  EXPECT_EQ(WordPieceTokenizer::words("ab\u200bcd e\x07"
                                      "f g\xef\xbf\xbdh"),
            (Words{"abcd", "ef", "gh"}));
  EXPECT_EQ(WordPieceTokenizer::words(std::string("x\0y", 3)), (Words{"xy"}));
  // Every Unicode whitespace separates, the line and paragraph separators included.
  EXPECT_EQ(WordPieceTokenizer::words("a\u00a0b\u3000c\u2028d\u2029e\r\nf"),
            (Words{"a", "b", "c", "d", "e", "f"}));
  // ASCII symbols and Unicode punctuation are words of their own; other symbols are not.
  EXPECT_EQ(WordPieceTokenizer::words("a$b+c~d\u00bfe\u2014f\u20acg"),
            (Words{"a", "$", "b", "+", "c", "~", "d", "\u00bf", "e", "\u2014", "f\u20acg"}));
  EXPECT_TRUE(WordPieceTokenizer::words(" \t\n ").empty());
  EXPECT_TRUE(WordPieceTokenizer::words("").empty());
}

TEST(WordPiece, LowercasesAndStripsAccents) {
  EXPECT_EQ(WordPieceTokenizer::words("CAFÉ Naïve ÅNGSTRÖM"), (Words{"cafe", "naive", "angstrom"}));
  // Decomposed input loses its marks the same way; a capital with a dot above too.
  EXPECT_EQ(WordPieceTokenizer::words("Cafe\u0301 \u0130stanbul"), (Words{"cafe", "istanbul"}));
  // Lower-casing is per character: a final capital sigma becomes σ, not ς.
  EXPECT_EQ(WordPieceTokenizer::words("ΣΟΦΟΣ"), (Words{"σοφοσ"}));
  const WordPieceTokenizer t = tiny();
  EXPECT_EQ(t.encode("Café, NAÏVE!", 64), (Ids{2, 12, 13, 15, 10, 3}));
}

TEST(WordPiece, CjkIdeographsAreWordsOfTheirOwn) {
  EXPECT_EQ(WordPieceTokenizer::words("a中文b"), (Words{"a", "中", "文", "b"}));
  // Kana are not split apart.
  EXPECT_EQ(WordPieceTokenizer::words("かなカナ"), (Words{"かなカナ"}));
  const WordPieceTokenizer t = tiny();
  EXPECT_EQ(t.encode("中文", 64), (Ids{2, 14, 1, 3}));
}

TEST(WordPiece, LongWordsAreUnknown) {
  const WordPieceTokenizer t = tiny();
  const std::string hundred(100, 'a');
  // 100 characters are still split ("a" + 99 "##a"), 101 are one [UNK].
  const Ids pieces = t.encode(hundred, 200);
  ASSERT_EQ(pieces.size(), 102u);
  EXPECT_EQ(pieces[1], 18);
  EXPECT_EQ(pieces[100], 19);
  EXPECT_EQ(t.encode(hundred + "a", 200), (Ids{2, 1, 3}));
  // Characters are counted, not bytes: 100 two-byte characters are not too long.
  std::string accented;
  for (int i = 0; i < 100; ++i) accented += "\u00e1";  // á, which strips to a
  EXPECT_EQ(t.encode(accented, 200).size(), 102u);
}

TEST(WordPiece, SpecialTokensWrittenInTheText) {
  const WordPieceTokenizer t = tiny();
  // Matched as written: "[mask]" is three words, none of them in the vocabulary.
  EXPECT_EQ(t.encode("the[MASK]a [SEP] [mask]", 64), (Ids{2, 16, 4, 18, 3, 1, 1, 1, 3}));
}

TEST(WordPiece, TruncatesBetweenClsAndSep) {
  const WordPieceTokenizer t = tiny();
  EXPECT_EQ(t.encode("unaffable the the", 4), (Ids{2, 5, 6, 3}));
  EXPECT_EQ(t.encode("the the the", 2), (Ids{2, 3}));
  EXPECT_EQ(t.encode("", 2), (Ids{2, 3}));
  EXPECT_THAT(testing::error_of<Error>([&] { t.encode("the", 1); }),
              HasSubstr("1 tokens leave no room for [CLS] and [SEP]"));
}

TEST(WordPiece, VocabularyErrors) {
  EXPECT_THAT(testing::error_of<Error>([] {
                WordPieceTokenizer({"[UNK]", "[CLS]"}, "v.txt");
              }),
              HasSubstr("v.txt: the vocabulary lacks [SEP]"));
  EXPECT_THAT(testing::error_of<Error>([] {
                WordPieceTokenizer({"[UNK]", "[CLS]", "a", "[SEP]", "a"}, "v.txt");
              }),
              HasSubstr("v.txt: token 'a' (line 5) repeats line 3"));
  EXPECT_THAT(testing::error_of<Error>([] {
                WordPieceTokenizer({"[UNK]", ""}, "v.txt");
              }),
              HasSubstr("v.txt: token 1 (line 2) is empty"));
  EXPECT_THAT(
      testing::error_of<Error>([] { WordPieceTokenizer::from_file("/nonexistent/vocab.txt"); }),
      HasSubstr("/nonexistent/vocab.txt: cannot open the vocabulary"));
}

TEST(WordPiece, ReadsVocabTxt) {
  testing::TempDir dir;
  std::string text;
  for (const std::string& token : kVocab) text += token + "\n";
  const auto path = dir.write("vocab.txt", std::as_bytes(std::span(text)));
  const WordPieceTokenizer t = WordPieceTokenizer::from_file(path);
  EXPECT_EQ(t.size(), kVocab.size());
  EXPECT_EQ(t.encode("unaffable", 8), (Ids{2, 5, 6, 7, 3}));
}

}  // namespace
}  // namespace cocktail::models
