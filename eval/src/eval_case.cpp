#include "cocktail/eval/eval_case.hpp"

namespace cocktail::eval {

std::string_view to_string(CaseKind kind) {
  switch (kind) {
    case CaseKind::niah:
      return "niah";
    case CaseKind::multi_needle:
      return "multi-needle";
    case CaseKind::passkey:
      return "passkey";
    case CaseKind::custom:
      return "custom";
  }
  return "custom";
}

std::optional<CaseKind> parse_case_kind(std::string_view name) {
  for (CaseKind kind : kAllCaseKinds) {
    if (to_string(kind) == name) return kind;
  }
  return std::nullopt;
}

}  // namespace cocktail::eval
