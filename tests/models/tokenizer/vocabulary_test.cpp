#include "cocktail/models/vocabulary.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cocktail/error.hpp"
#include "support/error_of.hpp"

namespace cocktail::models {
namespace {

using ::cocktail::testing::error_of;
using ::testing::AllOf;
using ::testing::HasSubstr;

// <s> control, then a b c ab abc normal, with merges "a b" and "ab c".
Vocabulary small() {
  Vocabulary v;
  v.tokens = {"<s>", "a", "b", "c", "ab", "abc"};
  v.types = {TokenType::control, TokenType::normal, TokenType::normal,
             TokenType::normal,  TokenType::normal, TokenType::normal};
  v.merges = {"a b", "ab c"};
  v.bos = 0;
  v.pre_tokenizer = "smollm";
  return v;
}

std::string error_of_validate(const Vocabulary& v) {
  return error_of<Error>([&] { v.validate(); });
}

TEST(VocabularyTest, AValidVocabularyPasses) {
  EXPECT_NO_THROW(small().validate());
  Vocabulary v = small();
  v.add_bos = true;
  v.eos = 0;
  v.unk = 5;
  v.pad = 1;
  EXPECT_NO_THROW(v.validate());
}

TEST(VocabularyTest, TokensAndTypes) {
  EXPECT_THAT(error_of_validate(Vocabulary{}), HasSubstr("no tokens"));
  Vocabulary v = small();
  v.types.pop_back();
  EXPECT_THAT(error_of_validate(v), HasSubstr("6 tokens but 5 token types"));
  v = small();
  v.types[3] = static_cast<TokenType>(7);
  EXPECT_THAT(error_of_validate(v), AllOf(HasSubstr("token 3 'c'"), HasSubstr("type 7")));
  v.types[3] = static_cast<TokenType>(0);
  EXPECT_THAT(error_of_validate(v), HasSubstr("type 0"));
  v = small();
  v.tokens[2] = "";
  EXPECT_THAT(error_of_validate(v), HasSubstr("token 2 is empty"));
  v = small();
  v.tokens[4] = "a";
  EXPECT_THAT(error_of_validate(v), HasSubstr("tokens 1 and 4 are both 'a'"));
}

TEST(VocabularyTest, SpecialIdsMustBeInRange) {
  Vocabulary v = small();
  v.bos = 6;
  EXPECT_THAT(error_of_validate(v), AllOf(HasSubstr("bos id 6"), HasSubstr("6 tokens")));
  v = small();
  v.eos = -1;
  EXPECT_THAT(error_of_validate(v), HasSubstr("eos id -1"));
  v = small();
  v.unk = 100;
  EXPECT_THAT(error_of_validate(v), HasSubstr("unk id 100"));
  v = small();
  v.pad = 6;
  EXPECT_THAT(error_of_validate(v), HasSubstr("pad id 6"));
  v = small();
  v.bos.reset();
  v.add_bos = true;
  EXPECT_THAT(error_of_validate(v), HasSubstr("add BOS but has no bos id"));
}

TEST(VocabularyTest, MergesNameTheirIndex) {
  Vocabulary v = small();
  v.merges = {"a b", "abc"};
  EXPECT_THAT(error_of_validate(v),
              AllOf(HasSubstr("merge 1 'abc'"), HasSubstr("not two tokens separated by a space")));
  v.merges = {"a b", " b"};  // the split is after the first byte, so this is one part
  EXPECT_THAT(error_of_validate(v), HasSubstr("merge 1"));
  v.merges = {"a b", "ab c", "x c"};
  EXPECT_THAT(error_of_validate(v),
              AllOf(HasSubstr("merge 2 'x c'"), HasSubstr("left part 'x' is not a token")));
  v.merges = {"a y"};
  EXPECT_THAT(error_of_validate(v),
              AllOf(HasSubstr("merge 0 'a y'"), HasSubstr("right part 'y' is not a token")));
  v.merges = {"b c"};
  EXPECT_THAT(error_of_validate(v),
              AllOf(HasSubstr("merge 0 'b c'"), HasSubstr("the merged 'bc' is not a token")));
  v.merges = {"a b", "ab c", "a b"};
  EXPECT_THAT(error_of_validate(v), HasSubstr("merge 2 'a b' repeats merge 0"));
}

}  // namespace
}  // namespace cocktail::models
