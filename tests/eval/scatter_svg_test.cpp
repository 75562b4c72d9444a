#include "cocktail/eval/scatter_svg.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "svg_parse.hpp"

namespace cocktail::eval {
namespace {

using testing::elements;
using ::testing::ElementsAre;
using testing::texts;

ScatterPlot accuracy_plot() {
  ScatterPlot plot;
  plot.title = "NIAH vs bits";
  plot.x_label = "average bits";
  plot.y_label = "NIAH score";
  plot.y_min = 0.0;
  plot.y_max = 1.0;
  plot.points = {
      {"fp16", 16.0, 1.0}, {"int2", 2.0, 0.4}, {"cocktail", 3.0, 0.95}, {"unknown", NAN, 0.5}};
  return plot;
}

double attribute(std::map<std::string, std::string>& e, const std::string& name) {
  return std::stod(e[name]);
}

TEST(ScatterSvgTest, OneLabelledPointPerFinitePoint) {
  const std::string svg = render_scatter_svg(accuracy_plot());
  auto points = elements(svg, "circle", "point");
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0]["data-label"], "fp16");
  EXPECT_EQ(points[0]["data-x"], "16");
  EXPECT_EQ(points[1]["data-y"], "0.4");
  EXPECT_THAT(texts(svg, "point-label"), ElementsAre("fp16", "int2", "cocktail"));
  EXPECT_THAT(texts(svg, "title"), ElementsAre("NIAH vs bits"));
  EXPECT_THAT(texts(svg, "x-label"), ElementsAre("average bits"));
  EXPECT_THAT(texts(svg, "y-label"), ElementsAre("NIAH score"));
}

TEST(ScatterSvgTest, AxesHaveRoundTicks) {
  const std::string svg = render_scatter_svg(accuracy_plot());
  EXPECT_THAT(texts(svg, "x-tick"), ElementsAre("0", "5", "10", "15", "20"));
  EXPECT_THAT(texts(svg, "y-tick"), ElementsAre("0.00", "0.25", "0.50", "0.75", "1.00"));
}

TEST(ScatterSvgTest, PointsSitWhereTheTicksSay) {
  const std::string svg = render_scatter_svg(accuracy_plot());
  auto x_ticks = elements(svg, "text", "x-tick");
  auto y_ticks = elements(svg, "text", "y-tick");
  auto points = elements(svg, "circle", "point");
  const double x0 = attribute(x_ticks.front(), "x"), x20 = attribute(x_ticks.back(), "x");
  // Tick labels sit 4 px below their line so the digits centre on it.
  const double y0 = attribute(y_ticks.front(), "y") - 4, y1 = attribute(y_ticks.back(), "y") - 4;
  EXPECT_NEAR(attribute(points[0], "cx"), x0 + (x20 - x0) * 16 / 20, 0.1);
  EXPECT_NEAR(attribute(points[0], "cy"), y1, 0.1);
  EXPECT_NEAR(attribute(points[1], "cx"), x0 + (x20 - x0) * 2 / 20, 0.1);
  EXPECT_NEAR(attribute(points[1], "cy"), y0 + (y1 - y0) * 0.4, 0.1);
}

TEST(ScatterSvgTest, LabelsOfPointsOnTopOfEachOtherDoNotOverlap) {
  ScatterPlot plot;
  plot.points = {{"int4", 4.0, 0.5}, {"kivi-int4", 4.0, 0.5}};
  auto labels = elements(render_scatter_svg(plot), "text", "point-label");
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_GE(attribute(labels[1], "y") - attribute(labels[0], "y"), 13.0);
}

TEST(MetricVsBitsTest, OnePointPerMethodWithTheMetricAndBits) {
  CaseResult hit;
  hit.kind = CaseKind::niah;
  hit.contains = 1.0;
  hit.kld = 0.02;
  CaseResult miss = hit;
  miss.contains = 0.0;
  miss.kld = 0.04;
  CaseResult other = hit;
  other.kind = CaseKind::passkey;
  other.contains = 0.0;
  const std::vector<MethodResults> methods = {
      {"cocktail", 3.0, {hit, miss, other}}, {"no bits", NAN, {hit}}, {"no niah", 2.0, {other}}};
  const ScatterPlot accuracy =
      metric_vs_bits(methods, Metric::contains, {CaseKind::niah, {}, {}}, "NIAH", "score");
  ASSERT_EQ(accuracy.points.size(), 1u);
  EXPECT_EQ(accuracy.points[0].label, "cocktail");
  EXPECT_DOUBLE_EQ(accuracy.points[0].x, 3.0);
  EXPECT_DOUBLE_EQ(accuracy.points[0].y, 0.5);
  EXPECT_EQ(accuracy.y_max, 1.0);
  const ScatterPlot kld = metric_vs_bits(methods, Metric::kld, {}, "KLD", "mean KLD");
  ASSERT_EQ(kld.points.size(), 2u);
  EXPECT_NEAR(kld.points[0].y, (0.02 + 0.04 + 0.02) / 3, 1e-12);
  EXPECT_TRUE(kld.y_logarithmic);
  EXPECT_FALSE(accuracy.y_logarithmic);
}

// KL divergences span decades (1e-4 for INT8, 1 and more for INT2 on some models): on a log axis
// with a tick a decade, each point sits at its decade's fraction, and FP16's 0 on the floor.
TEST(ScatterSvgTest, LogarithmicAxisHasADecadeATickAndZeroOnItsFloor) {
  ScatterPlot plot;
  plot.y_logarithmic = true;
  plot.points = {{"fp16", 16.0, 0.0}, {"int8", 8.0, 0.0002}, {"int2", 2.0, 1.5}};
  const std::string svg = render_scatter_svg(plot);
  EXPECT_THAT(texts(svg, "y-tick"), ElementsAre("0.0001", "0.001", "0.01", "0.1", "1", "10"));
  EXPECT_THAT(texts(svg, "point-label"), ElementsAre("fp16 (0)", "int8", "int2"));
  auto y_ticks = elements(svg, "text", "y-tick");
  auto points = elements(svg, "circle", "point");
  const double floor = attribute(y_ticks.front(), "y") - 4;
  const double top = attribute(y_ticks.back(), "y") - 4;
  EXPECT_NEAR(attribute(points[0], "cy"), floor, 0.1);
  // log10(0.0002) = -3.70: 0.30 of the way from 1e-4 to 1e1.
  EXPECT_NEAR(attribute(points[1], "cy"), floor + (top - floor) * (std::log10(2.0) / 5), 0.1);
  EXPECT_NEAR(attribute(points[2], "cy"), floor + (top - floor) * ((4 + std::log10(1.5)) / 5), 0.1);
}

}  // namespace
}  // namespace cocktail::eval
