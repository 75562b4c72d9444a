#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cocktail::eval {

// What a case tests; it decides how the expected answers are matched (see AnswerMatch). Besides
// custom cases, each is one of RULER's synthetic tasks (docs/eval.md):
//   niah               one needle with a word key ("the blue vault")
//   niah-number-key    one needle with a number key ("the vault numbered 482193")
//   multi-key          the asked needle among distractor needles with other keys
//   multi-value        one key with several values, all asked for
//   multi-needle       several keys asked at once (RULER's multi-query)
//   variable-tracking  a chain "VAR A = 12345", "VAR B = VAR A", ...; every variable asked for
//   common-words       a numbered list of words; the most frequent ones asked for
//   passkey            the classic pass key in filler text
enum class CaseKind {
  niah,
  niah_number_key,
  multi_key,
  multi_value,
  multi_needle,
  variable_tracking,
  common_words,
  passkey,
  custom
};

// The names the suite and JSONL files use: "niah", "niah-number-key", ..., "custom".
std::string_view to_string(CaseKind kind);
std::optional<CaseKind> parse_case_kind(std::string_view name);
// Every kind, in declaration order.
inline constexpr CaseKind kAllCaseKinds[] = {
    CaseKind::niah,         CaseKind::niah_number_key, CaseKind::multi_key,
    CaseKind::multi_value,  CaseKind::multi_needle,    CaseKind::variable_tracking,
    CaseKind::common_words, CaseKind::passkey,         CaseKind::custom};
// Every kind's name but custom's, comma-separated: what a suite may generate.
std::string generated_kind_names();

// Whether a suite places the kind's cases by depth (one case per length x depth, the asked
// needle at that depth) rather than spreading their needles over the context.
bool placed_by_depth(CaseKind kind);

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
  // Alternatives (any one is right), or answers that are all asked for: see answer_match().
  std::vector<std::string> expected;
  // The context length the generator aimed at, in model tokens; 0 for custom cases.
  std::int64_t target_tokens = 0;
  // One depth (0 = start, 1 = end of the context) and one range per needle that the question
  // asks about, in context order; distractor needles are not listed.
  std::vector<double> depths;
  std::vector<CharRange> needles;
};

}  // namespace cocktail::eval
