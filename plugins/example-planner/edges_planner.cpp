// "edges": an example planner built outside the Cocktail tree, from the installed headers only.
// The first and last `edge_chunks` full chunks of the context stay FP16; the full chunks between
// them are scored against the query, and those scoring at least the median of that middle get
// INT4, the others INT2. A final remainder shorter than a chunk stays FP16.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "cocktail/plugin.hpp"

namespace example {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Median of the finite scores (mean of the two middle ones for an even count); NaN if none.
double median(std::vector<double> scores) {
  std::erase_if(scores, [](double s) { return !std::isfinite(s); });
  if (scores.empty()) return kNaN;
  std::sort(scores.begin(), scores.end());
  const std::size_t mid = scores.size() / 2;
  return scores.size() % 2 == 1 ? scores[mid] : (scores[mid - 1] + scores[mid]) / 2.0;
}

}  // namespace

class EdgesPlanner : public cocktail::ChunkPlanner {
 public:
  explicit EdgesPlanner(cocktail::Options& opts)
      : chunk_size_(static_cast<int>(opts.get_int("chunk_size", 32, 1, 1048576))),
        edge_chunks_(opts.get_int("edge_chunks", 2, 0, 1048576)) {}

  std::string_view name() const override { return "edges"; }

  cocktail::Plan plan(const cocktail::PlanInput& input) override {
    const auto n_context = static_cast<std::int64_t>(input.token_texts.size());
    // Every full chunk starts FP16; the remainder shorter than a chunk stays so.
    cocktail::Plan plan =
        cocktail::fixed_size_chunks(n_context, chunk_size_, cocktail::Precision::fp16);
    const std::int64_t n_full = n_context / chunk_size_;
    // Middle chunks are [begin, end); empty when the edges cover every full chunk.
    const std::int64_t begin = std::min(edge_chunks_, n_full);
    const std::int64_t end = std::max(begin, n_full - edge_chunks_);
    const auto middle = std::span(plan.chunks).subspan(begin, end - begin);
    const std::vector<double> scores = cocktail::score_chunks(input, middle, "edges");

    plan.t_low = plan.t_high = median(scores);
    for (std::size_t i = 0; i < middle.size(); ++i) {
      middle[i].score = scores[i];
      middle[i].precision = tier(scores[i], plan.t_low);
    }
    return plan;
  }

 private:
  // Chunks whose score is unknown (NaN) keep the safer of the two tiers.
  static cocktail::Precision tier(double score, double threshold) {
    return std::isnan(score) || score >= threshold ? cocktail::Precision::int4
                                                   : cocktail::Precision::int2;
  }

  int chunk_size_;
  std::int64_t edge_chunks_;
};

}  // namespace example

COCKTAIL_PLANNER_PLUGIN("edges", "0.1.0",
                        "Example: edge chunks FP16, the middle INT4/INT2 around the median score",
                        example::EdgesPlanner)
