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

// The suite's generated cases, kind by kind in the suite's order, then by length, then depth:
//   niah          one needle per length x depth, id "niah-<length>-d<depth>";
//   multi-needle  one case per length, id "multi-needle-<length>", `suite.needles` needles at
//                 the depths (i + 0.5) / N, asked for together;
//   passkey       one per length x depth, id "passkey-<length>-d<depth>", in the classic filler
//                 or the haystack (suite.passkey_filler).
// Each case's needles come from the suite's seed and the case id, so a case does not change
// when other lengths or depths are added. With `written` needles (the suite's needle_file), the
// i-th NIAH case hides written[i % written.size()] instead; an answer that the haystack holds
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
