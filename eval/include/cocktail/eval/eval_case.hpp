#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cocktail::eval {

// What a case tests; it decides how the expected answers are matched (see AnswerMatch).
enum class CaseKind { niah, multi_needle, passkey, custom };

// "niah", "multi-needle", "passkey", "custom": the names the suite and JSONL files use.
std::string_view to_string(CaseKind kind);
std::optional<CaseKind> parse_case_kind(std::string_view name);
// Every kind, in declaration order.
inline constexpr CaseKind kAllCaseKinds[] = {CaseKind::niah, CaseKind::multi_needle,
                                             CaseKind::passkey, CaseKind::custom};

// A half-open byte range [begin, end) of a case's context.
struct CharRange {
  std::size_t begin = 0;
  std::size_t end = 0;

  friend bool operator==(const CharRange&, const CharRange&) = default;
};

// One question about one context. Generated cases know where their needles are, so the runner
// can map a needle to its token chunk and ask whether a scorer ranked that chunk high.
struct EvalCase {
  std::string id;
  CaseKind kind = CaseKind::custom;
  std::string context;
  std::string question;
  // Alternatives (any one is right), except for multi-needle cases, where all are asked for.
  std::vector<std::string> expected;
  // The context length the generator aimed at, in model tokens; 0 for custom cases.
  std::int64_t target_tokens = 0;
  // One depth (0 = start, 1 = end of the context) and one range per needle, in context order.
  std::vector<double> depths;
  std::vector<CharRange> needles;
};

}  // namespace cocktail::eval
