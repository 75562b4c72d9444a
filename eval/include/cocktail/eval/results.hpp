#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cocktail/eval/eval_case.hpp"
#include "cocktail/eval/metrics.hpp"

namespace cocktail::eval {

inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// One method's outcome on one case: what the reports and plots are drawn from. A metric the
// runner did not measure stays NaN and is left out of every mean.
struct CaseResult {
  std::string case_id;
  CaseKind kind = CaseKind::custom;
  std::int64_t length = 0;  // the case's target tokens; 0 for custom cases
  double depth = kNoValue;  // the first needle's depth; NaN without needles
  double contains = kNoValue;
  double f1 = kNoValue;
  double kld = kNoValue;   // mean KL divergence against the FP16 cache
  double top1 = kNoValue;  // top-1 agreement with the FP16 cache
};

// A case's identity (id, kind, length, first depth) with its answer scores.
CaseResult case_result(const EvalCase& c, const AnswerScore& score);

struct MethodResults {
  std::string method;
  double avg_bits = kNoValue;  // average bits per KV element
  std::vector<CaseResult> cases;
};

enum class Metric { contains, f1, kld, top1 };
double value_of(const CaseResult& result, Metric metric);

// Which cases a mean covers; an empty field matches every case.
struct CaseFilter {
  std::optional<CaseKind> kind;
  std::optional<std::int64_t> length;
  std::optional<double> depth;

  bool matches(const CaseResult& result) const;
};

// The mean of `metric` over the matching cases that have it; nullopt when none has.
std::optional<double> mean_metric(const std::vector<CaseResult>& cases, Metric metric,
                                  const CaseFilter& filter = {});

}  // namespace cocktail::eval
