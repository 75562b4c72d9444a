#include "plan_svg.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "cocktail/eval/svg_writer.hpp"

namespace cocktail::cli {

namespace {

const char* colour(Precision p) {
  switch (p) {
    case Precision::fp16:
      return "#d62728";
    case Precision::int8:
      return "#ff7f0e";
    case Precision::nf4:
      return "#9467bd";
    case Precision::int4:
      return "#2ca02c";
    case Precision::int2:
      return "#1f77b4";
  }
  return "#999999";
}

constexpr double kLeft = 150, kBarWidthMax = 24, kStripHeight = 120, kWidth = 1100;

struct Scale {
  double lo = 0, hi = 1;
  // Bar height for a score; unscored chunks get a short stub so they stay visible.
  double height(double score) const {
    if (std::isnan(score)) return kStripHeight * 0.15;
    const double t = hi > lo ? (score - lo) / (hi - lo) : 1.0;
    return kStripHeight * (0.15 + 0.85 * t);
  }
};

Scale score_scale(const Plan& plan) {
  Scale s{INFINITY, -INFINITY};
  for (const ChunkPlan& c : plan.chunks) {
    if (std::isnan(c.score)) continue;
    s.lo = std::min(s.lo, c.score);
    s.hi = std::max(s.hi, c.score);
  }
  if (s.lo > s.hi) s = {0, 1};
  return s;
}

void strip(std::ostringstream& svg, const Plan& plan, const std::vector<int>& order, double top,
           const std::string& label, const Scale& scale, double bar) {
  svg << "<text x='10' y='" << top + kStripHeight / 2 << "' font-size='14'>" << label
      << "</text>\n";
  double x = kLeft;
  for (int i : order) {
    const ChunkPlan& c = plan.chunks[std::size_t(i)];
    const double h = scale.height(c.score);
    svg << "<rect x='" << x << "' y='" << top + kStripHeight - h << "' width='"
        << std::max(bar - 1, 0.5) << "' height='" << h << "' fill='" << colour(c.precision)
        << "'><title>chunk " << c.index << ": tokens " << c.first_token << "+" << c.n_tokens
        << ", score " << c.score << ", " << to_string(c.precision) << "</title></rect>\n";
    x += bar;
  }
}

}  // namespace

std::string render_plan_svg(const Plan& plan, const std::string& title) {
  const Scale scale = score_scale(plan);
  const std::size_t n = std::max<std::size_t>(plan.chunks.size(), 1);
  const double bar = std::min(kBarWidthMax, (kWidth - kLeft - 20) / double(n));
  const double height = 2 * kStripHeight + 150;
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << kWidth << "' height='" << height
      << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n";
  svg << "<text x='10' y='24' font-size='16' font-weight='bold'>" << eval::xml_escape(title)
      << "</text>\n";

  std::vector<int> token_order(plan.chunks.size());
  for (std::size_t i = 0; i < token_order.size(); ++i) token_order[i] = int(i);
  strip(svg, plan, token_order, 40, "token order", scale, bar);
  for (double threshold : {plan.t_low, plan.t_high}) {
    if (std::isnan(threshold)) continue;
    const double y = 40 + kStripHeight - scale.height(threshold);
    svg << "<line x1='" << kLeft << "' x2='" << kLeft + bar * double(plan.chunks.size()) << "' y1='"
        << y << "' y2='" << y << "' stroke='black' stroke-dasharray='4 3'/>\n";
  }
  strip(svg, plan, plan.storage_order(), 60 + kStripHeight, "storage order", scale, bar);

  double x = kLeft;
  const double legend_y = 2 * kStripHeight + 100;
  for (Precision p : kAllPrecisions) {
    if (plan.tokens_at(p) == 0) continue;
    svg << "<rect x='" << x << "' y='" << legend_y << "' width='14' height='14' fill='" << colour(p)
        << "'/><text x='" << x + 20 << "' y='" << legend_y + 12 << "' font-size='13'>"
        << to_string(p) << "</text>\n";
    x += 90;
  }
  svg << "<text x='" << x << "' y='" << legend_y + 12
      << "' font-size='13'>bar height = chunk score; dashed = T_low, T_high</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace cocktail::cli
