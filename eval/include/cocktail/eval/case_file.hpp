#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/eval/eval_case.hpp"
#include "cocktail/eval/needles.hpp"

namespace cocktail::eval {

// Cases users bring, one JSON object per line (docs/eval.md):
//   {"id": "q1", "question": "...", "expected": "..." | ["...", ...],
//    "context": "..." | "context_file": "relative/to/the/jsonl.txt", "kind": "custom"}
// Blank lines are skipped. Any error names the file, the line and the key.
std::vector<EvalCase> load_cases_jsonl(const std::filesystem::path& file);

// The same from text: `source` names it in errors, `base_dir` is where context_file paths start.
std::vector<EvalCase> parse_cases_jsonl(std::string_view text, const std::string& source,
                                        const std::filesystem::path& base_dir);

// Needles users write, one JSON object per line (docs/eval.md):
//   {"statement": "... answer ...", "question": "...", "answer": "..."}
// The statement must hold the answer (as `contains` scores it) and the question must not.
// Blank lines are skipped. Any error names the file, the line and the key.
std::vector<WrittenNeedle> load_needles_jsonl(const std::filesystem::path& file);
std::vector<WrittenNeedle> parse_needles_jsonl(std::string_view text, const std::string& source);

}  // namespace cocktail::eval
