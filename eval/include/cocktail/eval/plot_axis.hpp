#pragma once

#include <string>
#include <vector>

namespace cocktail::eval {

// A plot axis with round tick values that covers the data: lo and hi are its first and last
// ticks. A linear axis steps by 1, 2, 2.5 or 5 times a power of ten; a logarithmic one has a
// tick at each power of ten.
struct PlotAxis {
  double lo = 0.0;
  double hi = 1.0;
  double step = 0.25;  // linear axes only
  bool logarithmic = false;
  std::vector<double> ticks;

  // Where `value` falls from 0 (lo) to 1 (hi); on a logarithmic axis, a value at or below 0
  // falls at lo.
  double fraction(double value) const;
  // A tick's label with as many decimals as it needs: "0.25", "2", "0.5"; "0.001", "10".
  std::string label(double value) const;
};

// An axis covering [min, max] with about `target_ticks` ticks; a single value gets a unit-wide
// axis around it.
PlotAxis nice_axis(double min, double max, int target_ticks = 5);

// A logarithmic axis from the power of ten at or below `min` to the one at or above `max`
// (0 < min <= max), at least one decade wide.
PlotAxis log_axis(double min, double max);

}  // namespace cocktail::eval
