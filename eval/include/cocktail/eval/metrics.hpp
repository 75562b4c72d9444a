#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cocktail/eval/eval_case.hpp"

namespace cocktail::eval {

// How a case's expected answers combine: any one of them is right (alternatives), or every one
// is asked for and the score is the fraction found (RULER's recall-style partial score).
// answer_match() gives `all` to multi-value, multi-needle, variable-tracking and common-words
// cases, `any` to the others.
enum class AnswerMatch { any, all };
AnswerMatch answer_match(CaseKind kind);

// ASCII case-folded, every punctuation mark a space, whitespace collapsed to single spaces and
// trimmed: "The code: 7391!" -> "the code 7391".
std::string normalize_answer(std::string_view text);

// Whether the normalised answer appears in the normalised output as whole words
// ("7391" is in "it is 7391." but not in "17391"); 1 or 0 with `any`, the fraction of answers
// found with `all`. An answer that normalises to nothing is never found.
double contains_score(std::string_view output, const std::vector<std::string>& expected,
                      AnswerMatch match);

// SQuAD's token F1: lower-case, punctuation removed, the articles a/an/the dropped, split on
// whitespace; the harmonic mean of token precision and recall over the bag of tokens. With `any`
// the best over the answers, with `all` against all answers joined. Two empty token lists
// score 1, one empty list 0.
double token_f1(std::string_view output, const std::vector<std::string>& expected,
                AnswerMatch match);

// Both scores of one output for one case.
struct AnswerScore {
  double contains = 0.0;
  double f1 = 0.0;
};
AnswerScore score_answer(const EvalCase& c, std::string_view output);

}  // namespace cocktail::eval
