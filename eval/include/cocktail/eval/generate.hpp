#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "cocktail/eval/context_builder.hpp"
#include "cocktail/eval/eval_case.hpp"
#include "cocktail/eval/needles.hpp"
#include "cocktail/eval/suite.hpp"

namespace cocktail::eval {

// The suite's generated cases, kind by kind in the suite's order, then by length (the kind's
// own from `kind_lengths`, else the suite's), then depth or sample:
//   niah, niah-number-key, multi-key, passkey   one case per length x depth, id
//       "<kind>-<length>-d<depth>", the asked needle at the depth; multi-key's
//       `suite.needles` - 1 distractors at depth + k / needles (wrapped), k = 1, 2, ...;
//       passkeys in the classic filler or the haystack (suite.passkey_filler);
//   multi-value, multi-needle, variable-tracking   `suite.samples` cases per length, ids
//       "<kind>-<length>" and then "<kind>-<length>-s<k>" for k = 2, 3, ...; `suite.needles`
//       needles at (i + 0.5) / needles in the first sample and (i + u) / needles, with u drawn
//       from the case's seed, in later ones;
//   common-words   `suite.samples` numbered word lists per length, ids as above, of the
//       haystack's words (make_common_words), asking for the `suite.common_words` most common.
// Each case comes from the suite's seed and the case id, so a case does not change when other
// lengths, depths, samples or kinds are added. With `written` needles (the suite's needle_file),
// the i-th NIAH case hides written[i % written.size()] instead; an answer that the haystack holds
// is an error naming its line. `haystack` may be empty when no kind reads it.
std::vector<EvalCase> generate_cases(const Suite& suite, std::string_view haystack,
                                     const TokenCounter& count,
                                     std::span<const WrittenNeedle> written = {});

// Every case a suite stands for: the generated ones, with the haystack folder
// `haystack_override` (the CLI's --haystack) or else the suite's and the suite's written
// needles, then the suite's JSONL cases.
// Throws Error when a generated kind needs a haystack and none is given.
std::vector<EvalCase> load_suite_cases(
    const Suite& suite, const std::optional<std::filesystem::path>& haystack_override,
    const TokenCounter& count);

}  // namespace cocktail::eval
