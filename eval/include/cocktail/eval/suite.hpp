#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cocktail/eval/eval_case.hpp"

namespace cocktail::eval {

// Where a passkey hides: in the classic repeated filler ("The grass is green. ...") or in the
// haystack's real text.
enum class PasskeyFiller { classic, haystack };

// What to generate: a TOML file (docs/eval.md) or the built-in default. Paths are already
// resolved against the suite file's folder.
struct Suite {
  std::string source;  // the file name, or "builtin"
  std::optional<std::filesystem::path> haystack;
  std::vector<std::int64_t> lengths;  // context lengths in model tokens
  // A kind's own lengths, in place of `lengths` (a long length for some kinds only).
  std::map<CaseKind, std::vector<std::int64_t>> kind_lengths;
  std::vector<double> depths;   // needle depths of the kinds placed by depth, 0 = start, 1 = end
  std::vector<CaseKind> kinds;  // generated kinds, in report order
  // Needles per multi-needle, multi-key (the asked one included) and multi-value case, and
  // variables per variable-tracking chain.
  int needles = 3;
  int samples = 1;        // cases per length of each kind not placed by depth
  int common_words = 10;  // the words a common-words case asks for
  PasskeyFiller passkey_filler = PasskeyFiller::classic;
  std::uint64_t seed = 1;
  std::optional<std::filesystem::path> cases;        // a JSONL file of custom cases
  std::optional<std::filesystem::path> needle_file;  // a JSONL file of written NIAH needles

  // The lengths `kind` is generated at.
  const std::vector<std::int64_t>& lengths_of(CaseKind kind) const;
  // Whether some generated case reads the haystack folder.
  bool needs_haystack() const;
};

// `--suite builtin`: 1K, 2K, 4K and 8K tokens; depths 0, 0.25, 0.5, 0.75, 1; niah, multi-needle
// with 3 needles and passkey in the classic filler; seed 1.
Suite builtin_suite();

// Parses suite TOML; `source_name` names it in errors and is where relative paths start. An
// unknown key or a bad value is a ConfigError naming the file, line and key.
Suite parse_suite(const std::string& toml_text, const std::string& source_name);
Suite load_suite(const std::filesystem::path& file);

}  // namespace cocktail::eval
