#include "cocktail/eval/metrics.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace cocktail::eval {

namespace {

bool is_punct(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x80 && std::ispunct(u);
}

char fold(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : " ") + part;
  return text;
}

// SQuAD's normalisation, as tokens: punctuation is deleted (not spaced) and articles dropped.
std::vector<std::string> squad_tokens(std::string_view text) {
  std::string kept;
  for (char c : text) {
    if (!is_punct(c)) kept += fold(c);
  }
  std::vector<std::string> tokens = words(kept);
  std::erase_if(tokens, [](const std::string& t) { return t == "a" || t == "an" || t == "the"; });
  return tokens;
}

double f1_of(const std::vector<std::string>& predicted, const std::vector<std::string>& truth) {
  if (predicted.empty() || truth.empty()) return predicted.empty() && truth.empty() ? 1.0 : 0.0;
  std::map<std::string, int> left;
  for (const std::string& t : truth) ++left[t];
  int common = 0;
  for (const std::string& t : predicted) {
    if (left[t] > 0) {
      --left[t];
      ++common;
    }
  }
  if (common == 0) return 0.0;
  const double precision = double(common) / double(predicted.size());
  const double recall = double(common) / double(truth.size());
  return 2 * precision * recall / (precision + recall);
}

}  // namespace

AnswerMatch answer_match(CaseKind kind) {
  const bool asks_for_several = kind == CaseKind::multi_value || kind == CaseKind::multi_needle ||
                                kind == CaseKind::variable_tracking ||
                                kind == CaseKind::common_words;
  return asks_for_several ? AnswerMatch::all : AnswerMatch::any;
}

std::string normalize_answer(std::string_view text) {
  std::string spaced;
  for (char c : text) spaced += is_punct(c) ? ' ' : fold(c);
  return joined(words(spaced));
}

double contains_score(std::string_view output, const std::vector<std::string>& expected,
                      AnswerMatch match) {
  if (expected.empty()) return 0.0;
  // Spaces around both sides make the match whole words.
  const std::string haystack = " " + normalize_answer(output) + " ";
  int found = 0;
  for (const std::string& answer : expected) {
    const std::string needle = normalize_answer(answer);
    if (!needle.empty() && haystack.find(" " + needle + " ") != std::string::npos) ++found;
  }
  if (match == AnswerMatch::any) return found > 0 ? 1.0 : 0.0;
  return double(found) / double(expected.size());
}

double token_f1(std::string_view output, const std::vector<std::string>& expected,
                AnswerMatch match) {
  if (expected.empty()) return 0.0;
  const std::vector<std::string> predicted = squad_tokens(output);
  if (match == AnswerMatch::all) return f1_of(predicted, squad_tokens(joined(expected)));
  double best = 0.0;
  for (const std::string& answer : expected) {
    best = std::max(best, f1_of(predicted, squad_tokens(answer)));
  }
  return best;
}

AnswerScore score_answer(const EvalCase& c, std::string_view output) {
  const AnswerMatch match = answer_match(c.kind);
  return {contains_score(output, c.expected, match), token_f1(output, c.expected, match)};
}

}  // namespace cocktail::eval
