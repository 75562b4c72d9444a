#include "cocktail/eval/scatter_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "cocktail/eval/plot_axis.hpp"
#include "cocktail/eval/svg_writer.hpp"

namespace cocktail::eval {

namespace {

constexpr double kLeft = 72, kTop = 44, kPlotW = 460, kPlotH = 300, kRight = 170, kBottom = 56;
// Labels are placed by a rough width estimate: sans-serif 12 px is about 7 px a character.
constexpr double kCharWidth = 7, kLabelHeight = 13;

struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

std::vector<ScatterPoint> drawable(const std::vector<ScatterPoint>& points) {
  std::vector<ScatterPoint> kept;
  for (const ScatterPoint& p : points) {
    if (std::isfinite(p.x) && std::isfinite(p.y)) kept.push_back(p);
  }
  return kept;
}

PlotAxis axis_for(const std::vector<ScatterPoint>& points, double ScatterPoint::*coordinate,
                  std::optional<double> lo, std::optional<double> hi) {
  double min = lo.value_or(INFINITY), max = hi.value_or(-INFINITY);
  for (const ScatterPoint& p : points) {
    min = std::min(min, p.*coordinate);
    max = std::max(max, p.*coordinate);
  }
  return nice_axis(min, max);
}

void draw_axes(SvgWriter& svg, const ScatterPlot& plot, const PlotAxis& x, const PlotAxis& y) {
  for (double tick : x.ticks) {
    const double px = kLeft + kPlotW * x.fraction(tick);
    svg.line(px, kTop, px, kTop + kPlotH, "stroke-opacity='0.12'");
    svg.text(px, kTop + kPlotH + 18, x.label(tick), "class='x-tick' text-anchor='middle'");
  }
  for (double tick : y.ticks) {
    const double py = kTop + kPlotH * (1 - y.fraction(tick));
    svg.line(kLeft, py, kLeft + kPlotW, py, "stroke-opacity='0.12'");
    svg.text(kLeft - 8, py + 4, y.label(tick), "class='y-tick' text-anchor='end'");
  }
  svg.line(kLeft, kTop + kPlotH, kLeft + kPlotW, kTop + kPlotH);
  svg.line(kLeft, kTop, kLeft, kTop + kPlotH);
  svg.text(kLeft + kPlotW / 2, kTop + kPlotH + 44, plot.x_label,
           "class='x-label' text-anchor='middle'");
  const double y_mid = kTop + kPlotH / 2;
  svg.text(
      20, y_mid, plot.y_label,
      fmt::format("class='y-label' text-anchor='middle' transform='rotate(-90 20 {:.1f})'", y_mid));
}

// Each label goes right of its point, moved down past labels already placed.
void draw_points(SvgWriter& svg, const std::vector<ScatterPoint>& points, const PlotAxis& x,
                 const PlotAxis& y) {
  std::vector<Box> placed;
  for (const ScatterPoint& p : points) {
    const double px = kLeft + kPlotW * x.fraction(p.x);
    const double py = kTop + kPlotH * (1 - y.fraction(p.y));
    svg.circle(px, py, 5, "#1f77b4",
               fmt::format("class='point' data-label='{}' data-x='{}' data-y='{}'",
                           xml_escape(p.label), p.x, p.y));
    Box box{px + 8, py - 9, px + 8 + kCharWidth * double(p.label.size()), py + 4};
    for (int tries = 0; tries < 12 && std::any_of(placed.begin(), placed.end(),
                                                  [&box](const Box& b) { return box.overlaps(b); });
         ++tries) {
      box.y0 += kLabelHeight;
      box.y1 += kLabelHeight;
    }
    placed.push_back(box);
    svg.text(box.x0, box.y1 - 1, p.label, "class='point-label'");
  }
}

// The y axis over the positive values; points at 0 (or below) are labelled as such, since they
// sit on the axis's floor.
PlotAxis logarithmic_y_axis(std::vector<ScatterPoint>& points) {
  double min = INFINITY, max = -INFINITY;
  for (ScatterPoint& p : points) {
    if (p.y <= 0.0) {
      p.label += " (0)";
      continue;
    }
    min = std::min(min, p.y);
    max = std::max(max, p.y);
  }
  return std::isfinite(min) ? log_axis(min, max) : log_axis(1.0, 10.0);
}

}  // namespace

std::string render_scatter_svg(const ScatterPlot& plot) {
  std::vector<ScatterPoint> points = drawable(plot.points);
  const PlotAxis x = axis_for(points, &ScatterPoint::x, std::nullopt, std::nullopt);
  const PlotAxis y = plot.y_logarithmic
                         ? logarithmic_y_axis(points)
                         : axis_for(points, &ScatterPoint::y, plot.y_min, plot.y_max);
  SvgWriter svg(kLeft + kPlotW + kRight, kTop + kPlotH + kBottom);
  svg.text(10, 24, plot.title, "class='title' font-size='15' font-weight='bold'");
  draw_axes(svg, plot, x, y);
  draw_points(svg, points, x, y);
  return svg.finish();
}

ScatterPlot metric_vs_bits(const std::vector<MethodResults>& methods, Metric metric,
                           const CaseFilter& filter, std::string title, std::string y_label) {
  ScatterPlot plot;
  plot.title = std::move(title);
  plot.x_label = "average bits per KV element";
  plot.y_label = std::move(y_label);
  if (metric == Metric::kld) {
    plot.y_logarithmic = true;
  } else {
    plot.y_min = 0.0;
    plot.y_max = 1.0;
  }
  for (const MethodResults& method : methods) {
    const std::optional<double> mean = mean_metric(method.cases, metric, filter);
    if (mean && !std::isnan(method.avg_bits)) {
      plot.points.push_back({method.method, method.avg_bits, *mean});
    }
  }
  return plot;
}

}  // namespace cocktail::eval
