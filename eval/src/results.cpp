#include "cocktail/eval/results.hpp"

#include <cmath>

namespace cocktail::eval {

CaseResult case_result(const EvalCase& c, const AnswerScore& score) {
  CaseResult result;
  result.case_id = c.id;
  result.kind = c.kind;
  result.length = c.target_tokens;
  if (!c.depths.empty()) result.depth = c.depths.front();
  result.contains = score.contains;
  result.f1 = score.f1;
  return result;
}

double value_of(const CaseResult& result, Metric metric) {
  switch (metric) {
    case Metric::contains:
      return result.contains;
    case Metric::f1:
      return result.f1;
    case Metric::kld:
      return result.kld;
    case Metric::top1:
      return result.top1;
  }
  return kNoValue;
}

bool CaseFilter::matches(const CaseResult& result) const {
  return (!kind || result.kind == *kind) && (!length || result.length == *length) &&
         (!depth || result.depth == *depth);
}

std::optional<double> mean_metric(const std::vector<CaseResult>& cases, Metric metric,
                                  const CaseFilter& filter) {
  double sum = 0.0;
  int n = 0;
  for (const CaseResult& result : cases) {
    const double value = value_of(result, metric);
    if (!filter.matches(result) || std::isnan(value)) continue;
    sum += value;
    ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

}  // namespace cocktail::eval
