#pragma once

#include <string>
#include <vector>

namespace cocktail::eval {

// A plot axis with round tick values (steps of 1, 2, 2.5 or 5 times a power of ten) that
// covers the data: lo and hi are its first and last ticks.
struct PlotAxis {
  double lo = 0.0;
  double hi = 1.0;
  double step = 0.25;
  std::vector<double> ticks;

  // Where `value` falls from 0 (lo) to 1 (hi).
  double fraction(double value) const { return (value - lo) / (hi - lo); }
  // A tick's label with as many decimals as the step needs: "0.25", "2", "0.5".
  std::string label(double value) const;
};

// An axis covering [min, max] with about `target_ticks` ticks; a single value gets a unit-wide
// axis around it.
PlotAxis nice_axis(double min, double max, int target_ticks = 5);

}  // namespace cocktail::eval
