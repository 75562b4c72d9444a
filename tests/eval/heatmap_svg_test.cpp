#include "cocktail/eval/heatmap_svg.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "svg_parse.hpp"

namespace cocktail::eval {
namespace {

using testing::elements;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::texts;

CaseResult niah(std::int64_t length, double depth, double score) {
  CaseResult r;
  r.kind = CaseKind::niah;
  r.length = length;
  r.depth = depth;
  r.contains = score;
  return r;
}

MethodResults method() {
  MethodResults m;
  m.method = "cocktail<bm25>";
  m.avg_bits = 3.0;
  // Two cases at (1K, 0) average to 0.5; (2K, 50%) has none.
  m.cases = {niah(1024, 0.0, 1.0), niah(1024, 0.0, 0.0), niah(1024, 0.5, 1.0),
             niah(2048, 0.0, 0.0)};
  CaseResult passkey = niah(4096, 0.25, 1.0);
  passkey.kind = CaseKind::passkey;
  CaseResult custom;
  custom.contains = 1.0;
  m.cases.push_back(passkey);
  m.cases.push_back(custom);
  return m;
}

TEST(HeatmapSvgTest, OneCellPerDepthAndLengthWithTheMeanScore) {
  const std::string svg = render_heatmap_svg(method());
  auto cells = elements(svg, "rect", "cell");
  ASSERT_EQ(cells.size(), 4u);
  // Column by column: (1K, 0%), (1K, 50%), (2K, 0%), (2K, 50%).
  EXPECT_EQ(cells[0]["data-length"], "1024");
  EXPECT_EQ(cells[0]["data-depth"], "0");
  EXPECT_EQ(cells[0]["data-score"], "0.5");
  EXPECT_EQ(cells[1]["data-depth"], "0.5");
  EXPECT_EQ(cells[1]["data-score"], "1");
  EXPECT_EQ(cells[2]["data-length"], "2048");
  EXPECT_EQ(cells[2]["data-score"], "0");
  EXPECT_EQ(cells[3]["data-score"], "");
  EXPECT_THAT(texts(svg, "value"), ElementsAre("0.50", "1.00", "0.00", "–"));
}

TEST(HeatmapSvgTest, ColoursRunFromRedThroughYellowToGreen) {
  auto cells = elements(render_heatmap_svg(method()), "rect", "cell");
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(cells[0]["fill"], "#fee08b");
  EXPECT_EQ(cells[1]["fill"], "#1a9850");
  EXPECT_EQ(cells[2]["fill"], "#d73027");
  EXPECT_EQ(cells[3]["fill"], "#dddddd");
}

TEST(HeatmapSvgTest, LengthsRunRightAndDepthsDown) {
  auto cells = elements(render_heatmap_svg(method()), "rect", "cell");
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_LT(std::stod(cells[0]["x"]), std::stod(cells[2]["x"]));
  EXPECT_EQ(cells[0]["x"], cells[1]["x"]);
  EXPECT_LT(std::stod(cells[0]["y"]), std::stod(cells[1]["y"]));
}

TEST(HeatmapSvgTest, AxesAndTitleAreLabelled) {
  const std::string svg = render_heatmap_svg(method());
  EXPECT_THAT(texts(svg, "x-tick"), ElementsAre("1K", "2K"));
  EXPECT_THAT(texts(svg, "y-tick"), ElementsAre("0%", "50%"));
  EXPECT_THAT(texts(svg, "x-label"), ElementsAre("context length (tokens)"));
  EXPECT_THAT(texts(svg, "y-label"), ElementsAre("needle depth"));
  EXPECT_THAT(texts(svg, "title"), ElementsAre("cocktail&lt;bm25&gt; (3.00 avg bits): niah score"));
}

TEST(HeatmapSvgTest, OtherKindsHaveTheirOwnGrid) {
  const std::string svg = render_heatmap_svg(method(), CaseKind::passkey);
  auto cells = elements(svg, "rect", "cell");
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0]["data-length"], "4096");
  EXPECT_THAT(texts(svg, "y-tick"), ElementsAre("25%"));
}

TEST(HeatmapSvgTest, NoCasesSaysSo) {
  MethodResults empty;
  empty.method = "fp16";
  const std::string svg = render_heatmap_svg(empty);
  EXPECT_TRUE(elements(svg, "rect", "cell").empty());
  EXPECT_THAT(texts(svg, "empty"), ElementsAre("no niah cases"));
  EXPECT_THAT(texts(svg, "title"), ElementsAre("fp16: niah score"));
}

}  // namespace
}  // namespace cocktail::eval
