#include "cocktail/eval/eval_case.hpp"

namespace cocktail::eval {

std::string_view to_string(CaseKind kind) {
  switch (kind) {
    case CaseKind::niah:
      return "niah";
    case CaseKind::niah_number_key:
      return "niah-number-key";
    case CaseKind::multi_key:
      return "multi-key";
    case CaseKind::multi_value:
      return "multi-value";
    case CaseKind::multi_needle:
      return "multi-needle";
    case CaseKind::variable_tracking:
      return "variable-tracking";
    case CaseKind::common_words:
      return "common-words";
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

std::string generated_kind_names() {
  std::string names;
  for (CaseKind kind : kAllCaseKinds) {
    if (kind == CaseKind::custom) continue;
    if (!names.empty()) names += ", ";
    names += to_string(kind);
  }
  return names;
}

bool placed_by_depth(CaseKind kind) {
  return kind == CaseKind::niah || kind == CaseKind::niah_number_key ||
         kind == CaseKind::multi_key || kind == CaseKind::passkey;
}

}  // namespace cocktail::eval
