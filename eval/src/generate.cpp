#include "cocktail/eval/generate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "cocktail/error.hpp"
#include "cocktail/eval/case_file.hpp"
#include "cocktail/eval/haystack.hpp"
#include "cocktail/eval/metrics.hpp"
#include "cocktail/eval/needles.hpp"

namespace cocktail::eval {

namespace {

// A case's own seed: the suite's seed mixed with the case id (FNV-1a, then a SplitMix64
// finaliser), the same on every platform.
std::uint64_t case_seed(std::uint64_t seed, std::string_view id) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : id) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  std::uint64_t z = seed ^ h;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The classic filler repeated until it holds at least `min_tokens` tokens.
std::string passkey_filler(std::int64_t min_tokens, const TokenCounter& count) {
  std::string filler(kPasskeyFiller);
  while (count(filler) < min_tokens) filler += " " + filler;
  return filler;
}

// Builds one case from its needles: the context of `length` tokens cut from `source`.
EvalCase needle_case(std::string id, CaseKind kind, std::int64_t length, std::string_view source,
                     NeedleSet set, const std::vector<double>& depths, const TokenCounter& count) {
  std::vector<NeedlePlacement> placements;
  for (std::size_t i = 0; i < set.needles.size(); ++i) {
    placements.push_back({set.needles[i].sentence, depths[i]});
  }
  BuiltContext built = build_context(source, length, placements, count);
  EvalCase c;
  c.id = std::move(id);
  c.kind = kind;
  c.context = std::move(built.text);
  c.question = std::move(set.question);
  for (const Needle& needle : set.needles) c.expected.push_back(needle.answer);
  c.target_tokens = length;
  c.depths = depths;
  c.needles = std::move(built.needles);
  return c;
}

std::string depth_id(std::string_view kind, std::int64_t length, double depth) {
  return fmt::format("{}-{}-d{:.2f}", kind, length, depth);
}

// Written needles whose answers the haystack does not hold: an answer it holds could be found
// by chance. One pass over the haystack clears them all; only a hit looks for the culprit.
void check_written(std::span<const WrittenNeedle> written, std::string_view haystack,
                   const Suite& suite) {
  std::vector<std::string> answers;
  for (const WrittenNeedle& needle : written) answers.push_back(needle.answer);
  if (contains_score(haystack, answers, AnswerMatch::all) == 0.0) return;
  for (const WrittenNeedle& needle : written) {
    if (contains_score(haystack, {needle.answer}, AnswerMatch::any) > 0.0) {
      throw Error(
          fmt::format("{}:{}: answer = \"{}\" is in the haystack, so a model could give it without "
                      "finding the needle; allowed: an answer the haystack does not hold",
                      suite.needle_file ? suite.needle_file->string() : "the needles", needle.line,
                      needle.answer));
    }
  }
}

NeedleSet written_needle_set(const WrittenNeedle& needle) {
  return {{{needle.statement, needle.answer}}, needle.question};
}

void add_kind(CaseKind kind, const Suite& suite, std::string_view haystack,
              const TokenCounter& count, std::span<const WrittenNeedle> written,
              std::vector<EvalCase>& cases) {
  if (suite.lengths.empty()) return;
  const std::int64_t longest = *std::max_element(suite.lengths.begin(), suite.lengths.end());
  const std::string filler =
      kind == CaseKind::passkey && suite.passkey_filler == PasskeyFiller::classic
          ? passkey_filler(longest, count)
          : std::string();
  const std::string_view source = filler.empty() ? haystack : filler;
  std::size_t next_written = 0;
  for (std::int64_t length : suite.lengths) {
    if (kind == CaseKind::multi_needle) {
      const std::string id = fmt::format("multi-needle-{}", length);
      std::vector<double> depths;
      for (int i = 0; i < suite.needles; ++i) depths.push_back((i + 0.5) / suite.needles);
      NeedleSet set = make_code_needles(case_seed(suite.seed, id), suite.needles, source);
      cases.push_back(needle_case(id, kind, length, source, std::move(set), depths, count));
      continue;
    }
    for (double depth : suite.depths) {
      const std::string id = depth_id(to_string(kind), length, depth);
      const std::uint64_t seed = case_seed(suite.seed, id);
      NeedleSet set = kind == CaseKind::passkey ? make_passkey(seed, source)
                      : written.empty()
                          ? make_code_needles(seed, 1, source)
                          : written_needle_set(written[next_written++ % written.size()]);
      cases.push_back(needle_case(id, kind, length, source, std::move(set), {depth}, count));
    }
  }
}

}  // namespace

std::vector<EvalCase> generate_cases(const Suite& suite, std::string_view haystack,
                                     const TokenCounter& count,
                                     std::span<const WrittenNeedle> written) {
  if (suite.needs_haystack() && haystack.empty()) {
    throw Error(fmt::format("the suite {} generates cases in a haystack, but the haystack is empty",
                            suite.source));
  }
  check_written(written, haystack, suite);
  std::vector<EvalCase> cases;
  for (CaseKind kind : suite.kinds) add_kind(kind, suite, haystack, count, written, cases);
  return cases;
}

std::vector<EvalCase> load_suite_cases(
    const Suite& suite, const std::optional<std::filesystem::path>& haystack_override,
    const TokenCounter& count) {
  std::string haystack;
  if (suite.needs_haystack()) {
    const std::optional<std::filesystem::path> folder =
        haystack_override ? haystack_override : suite.haystack;
    if (!folder) {
      throw Error(
          fmt::format("the suite {} generates cases in a haystack but names no folder; "
                      "set `haystack` in the suite or pass --haystack DIR",
                      suite.source));
    }
    haystack = load_haystack(*folder);
  }
  const std::vector<WrittenNeedle> written =
      suite.needle_file ? load_needles_jsonl(*suite.needle_file) : std::vector<WrittenNeedle>{};
  std::vector<EvalCase> cases = generate_cases(suite, haystack, count, written);
  if (!suite.cases) return cases;
  for (EvalCase& c : load_cases_jsonl(*suite.cases)) {
    const bool taken = std::any_of(cases.begin(), cases.end(),
                                   [&c](const EvalCase& other) { return other.id == c.id; });
    if (taken) {
      throw Error(
          fmt::format("{}: id = \"{}\" is also a generated case's id; allowed: ids "
                      "the suite does not generate",
                      suite.cases->string(), c.id));
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace cocktail::eval
