#pragma once

#include <string>
#include <vector>

namespace cocktail::cli {

// One method of an evaluation: its name and the `section.key=value` overrides that make it from
// the base config.
struct EvalMethod {
  std::string name;
  std::vector<std::string> overrides;
};

// Every method the issue compares, in report order.
inline constexpr const char* kDefaultEvalMethods =
    "fp16,int8,int4,int2,kivi-int4,kivi-int2,kivi-int2-w128,nf4,recency,cocktail@bm25,"
    "cocktail@minilm,cocktail@attention,budget-2.5@attention,budget-3@attention,"
    "budget-4@attention,budget-3@attention+ls";

// Parses a comma-separated method list. Names:
//   fp16, int8, int4, int2, nf4    one precision everywhere, keys and values grouped per token
//   kivi-int4, kivi-int2            one precision, keys per channel and values per token (KIVI)
//   kivi-int2-w128                  kivi-int2 with KIVI's FP16 window of the newest 128 tokens
//   recency                         the recency planner's tiers
//   cocktail[@scorer]               the Cocktail planner, with the config's or the named scorer
//   budget-<bits>[@scorer]          the budget planner at <bits> average code bits
// Any of them followed by +ls fits INT4/INT2 scales and zeros by least squares
// (quant.range = "least_squares").
// Throws Error naming an unknown method and listing the known ones.
std::vector<EvalMethod> parse_eval_methods(const std::string& list);

}  // namespace cocktail::cli
