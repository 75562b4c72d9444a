#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cocktail/eval/results.hpp"

namespace cocktail::eval {

struct ScatterPoint {
  std::string label;
  double x = 0.0;
  double y = 0.0;
};

// A labelled scatter plot. The axes cover the points and, where given, the extra bounds (so an
// accuracy axis can always show 0 to 1).
struct ScatterPlot {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<ScatterPoint> points;
  std::optional<double> y_min;
  std::optional<double> y_max;
  // A logarithmic y axis over the positive values (y_min and y_max unused); a point at 0 sits on
  // the axis's floor, its label marked "(0)".
  bool y_logarithmic = false;
};

// Axes with round ticks and grid lines, one circle and one label per point. Points with a NaN
// coordinate are left out. Circles carry data-label, data-x and data-y.
std::string render_scatter_svg(const ScatterPlot& plot);

// One point per method: the mean of `metric` over the cases `filter` picks, against the
// method's average bits. Methods without the metric or the bits are left out; scores (contains,
// F1, top-1) get a 0..1 axis, KL divergence a logarithmic one (it spans decades).
ScatterPlot metric_vs_bits(const std::vector<MethodResults>& methods, Metric metric,
                           const CaseFilter& filter, std::string title, std::string y_label);

}  // namespace cocktail::eval
