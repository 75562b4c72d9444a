#include "cocktail/eval/plot_axis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cocktail::eval {

namespace {

// The smallest round step at least `raw`.
double round_step(double raw) {
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double mantissa : {1.0, 2.0, 2.5, 5.0}) {
    if (mantissa * power >= raw * (1 - 1e-9)) return mantissa * power;
  }
  return 10.0 * power;
}

}  // namespace

double PlotAxis::fraction(double value) const {
  if (!logarithmic) return (value - lo) / (hi - lo);
  if (value <= 0.0) return 0.0;
  return (std::log10(value) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
}

std::string PlotAxis::label(double value) const {
  if (logarithmic) {
    // A power of ten below 1 needs as many decimals as its exponent says.
    const int decimals = std::max(0, -static_cast<int>(std::lround(std::log10(value))));
    return fmt::format("{:.{}f}", value, decimals);
  }
  // As many decimals as the step has: 0.25 needs two, 5 none.
  int decimals = 0;
  while (decimals < 9 && std::abs(step * std::pow(10.0, decimals) -
                                  std::round(step * std::pow(10.0, decimals))) > 1e-6) {
    ++decimals;
  }
  // Printing -0.0 as "-0" would look like a bug.
  const double shown = std::abs(value) < step * 1e-6 ? 0.0 : value;
  return fmt::format("{:.{}f}", shown, decimals);
}

PlotAxis nice_axis(double min, double max, int target_ticks) {
  if (!std::isfinite(min) || !std::isfinite(max)) min = 0.0, max = 1.0;
  if (min > max) std::swap(min, max);
  if (min == max) {
    min -= 0.5;
    max += 0.5;
  }
  PlotAxis axis;
  axis.step = round_step((max - min) / std::max(target_ticks - 1, 1));
  axis.lo = std::floor(min / axis.step + 1e-9) * axis.step;
  axis.hi = std::ceil(max / axis.step - 1e-9) * axis.step;
  const auto n = static_cast<int>(std::lround((axis.hi - axis.lo) / axis.step));
  for (int i = 0; i <= n; ++i) axis.ticks.push_back(axis.lo + i * axis.step);
  return axis;
}

PlotAxis log_axis(double min, double max) {
  const int first = static_cast<int>(std::floor(std::log10(min) + 1e-9));
  const int last = std::max(first + 1, static_cast<int>(std::ceil(std::log10(max) - 1e-9)));
  PlotAxis axis;
  axis.logarithmic = true;
  axis.lo = std::pow(10.0, first);
  axis.hi = std::pow(10.0, last);
  for (int e = first; e <= last; ++e) axis.ticks.push_back(std::pow(10.0, e));
  return axis;
}

}  // namespace cocktail::eval
