#include "cocktail/eval/markdown_table.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cocktail/error.hpp"
#include "support/error_of.hpp"

namespace cocktail::eval {
namespace {

TEST(MarkdownTableTest, RightAlignsNumbersAtTheirDecimals) {
  const std::string table = render_markdown_table(
      "method", {{"avg bits", 2}, {"NIAH", 3}, {"KV bytes", 0}},
      {{"fp16", {16.0, 1.0, 2048.4}}, {"cocktail|bm25", {2.875, 0.98765, std::nullopt}}});
  EXPECT_EQ(table,
            "| method | avg bits | NIAH | KV bytes |\n"
            "| --- | ---: | ---: | ---: |\n"
            "| fp16 | 16.00 | 1.000 | 2048 |\n"
            "| cocktail\\|bm25 | 2.88 | 0.988 | – |\n");
}

TEST(MarkdownTableTest, ARowOfTheWrongWidthIsAnError) {
  const std::string message = testing::error_of<Error>([] {
    render_markdown_table("method", {{"a", 2}, {"b", 2}}, {{"int2", {1.0}}});
  });
  EXPECT_THAT(message, ::testing::HasSubstr("\"int2\" has 1 values for 2 columns"));
}

}  // namespace
}  // namespace cocktail::eval
