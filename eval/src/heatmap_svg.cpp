#include "cocktail/eval/heatmap_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cocktail/eval/svg_writer.hpp"

namespace cocktail::eval {

namespace {

constexpr double kCellWidth = 72, kCellHeight = 34, kLeft = 110, kTop = 56, kBottom = 64;

struct Rgb {
  double r, g, b;
};

// Red, yellow, green: a diverging scale that reads as bad to good.
std::string score_colour(double score) {
  constexpr Rgb kStops[] = {{215, 48, 39}, {254, 224, 139}, {26, 152, 80}};
  const double t = std::clamp(score, 0.0, 1.0) * 2;
  const int i = std::min(static_cast<int>(t), 1);
  const double f = t - i;
  const auto mix = [f](double a, double b) {
    return static_cast<int>(std::lround(a + (b - a) * f));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(kStops[i].r, kStops[i + 1].r),
                     mix(kStops[i].g, kStops[i + 1].g), mix(kStops[i].b, kStops[i + 1].b));
}

// "8K" for whole multiples of 1024 tokens, the count itself otherwise.
std::string length_label(std::int64_t length) {
  return length % 1024 == 0 ? fmt::format("{}K", length / 1024) : fmt::format("{}", length);
}

template <class T, class Get>
std::vector<T> distinct_sorted(const std::vector<CaseResult>& cases, CaseKind kind, Get get) {
  std::vector<T> values;
  for (const CaseResult& c : cases) {
    if (c.kind == kind && std::find(values.begin(), values.end(), get(c)) == values.end()) {
      values.push_back(get(c));
    }
  }
  std::sort(values.begin(), values.end());
  return values;
}

std::string title_of(const MethodResults& method, CaseKind kind) {
  const std::string bits =
      std::isnan(method.avg_bits) ? "" : fmt::format(" ({:.2f} avg bits)", method.avg_bits);
  return fmt::format("{}{}: {} score", method.method, bits, to_string(kind));
}

void draw_cell(SvgWriter& svg, const MethodResults& method, CaseKind kind, std::int64_t length,
               double depth, double x, double y) {
  const std::optional<double> score =
      mean_metric(method.cases, Metric::contains, {kind, length, depth});
  const std::string data =
      fmt::format("class='cell' data-length='{}' data-depth='{}' data-score='{}'", length, depth,
                  score ? fmt::format("{}", *score) : "");
  svg.rect(x, y, kCellWidth, kCellHeight, score ? score_colour(*score) : "#dddddd",
           data + " stroke='white'");
  svg.text(x + kCellWidth / 2, y + kCellHeight / 2 + 4, score ? fmt::format("{:.2f}", *score) : "–",
           "class='value' text-anchor='middle'");
}

}  // namespace

std::string render_heatmap_svg(const MethodResults& method, CaseKind kind) {
  // NaN depths (cases without needles) cannot be placed on the grid.
  std::vector<CaseResult> placed = method.cases;
  std::erase_if(placed, [](const CaseResult& c) { return std::isnan(c.depth); });
  const auto lengths =
      distinct_sorted<std::int64_t>(placed, kind, [](const CaseResult& c) { return c.length; });
  const auto depths =
      distinct_sorted<double>(placed, kind, [](const CaseResult& c) { return c.depth; });
  const double grid_w = kCellWidth * double(std::max<std::size_t>(lengths.size(), 1));
  const double grid_h = kCellHeight * double(std::max<std::size_t>(depths.size(), 1));
  SvgWriter svg(kLeft + grid_w + 30, kTop + grid_h + kBottom);
  svg.text(10, 24, title_of(method, kind), "class='title' font-size='15' font-weight='bold'");
  if (lengths.empty()) {
    svg.text(kLeft, kTop + 20, fmt::format("no {} cases", to_string(kind)), "class='empty'");
    return svg.finish();
  }
  for (std::size_t col = 0; col < lengths.size(); ++col) {
    const double x = kLeft + kCellWidth * double(col);
    for (std::size_t row = 0; row < depths.size(); ++row) {
      draw_cell(svg, method, kind, lengths[col], depths[row], x, kTop + kCellHeight * double(row));
    }
    svg.text(x + kCellWidth / 2, kTop + grid_h + 18, length_label(lengths[col]),
             "class='x-tick' text-anchor='middle'");
  }
  for (std::size_t row = 0; row < depths.size(); ++row) {
    svg.text(kLeft - 8, kTop + kCellHeight * (double(row) + 0.5) + 4,
             fmt::format("{:.0f}%", depths[row] * 100), "class='y-tick' text-anchor='end'");
  }
  svg.text(kLeft + grid_w / 2, kTop + grid_h + 44, "context length (tokens)",
           "class='x-label' text-anchor='middle'");
  const double y_mid = kTop + grid_h / 2;
  svg.text(
      24, y_mid, "needle depth",
      fmt::format("class='y-label' text-anchor='middle' transform='rotate(-90 24 {:.1f})'", y_mid));
  return svg.finish();
}

}  // namespace cocktail::eval
