#include "cocktail/eval/generate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "cocktail/error.hpp"
#include "cocktail/eval/case_file.hpp"
#include "cocktail/eval/common_words.hpp"
#include "cocktail/eval/haystack.hpp"
#include "cocktail/eval/metrics.hpp"
#include "cocktail/eval/needles.hpp"
#include "seeded_random.hpp"

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

// Builds one case from its needles, placed at `depths` (one per needle): the context of
// `length` tokens cut from `source`. Only the needles the question asks about are recorded.
EvalCase needle_case(std::string id, CaseKind kind, std::int64_t length, std::string_view source,
                     NeedleSet set, const std::vector<double>& depths, const TokenCounter& count) {
  std::vector<NeedlePlacement> placements;
  for (std::size_t i = 0; i < set.needles.size(); ++i) {
    placements.push_back({set.needles[i].sentence, depths[i]});
  }
  BuiltContext built = build_context(source, length, placements, count);
  const std::size_t asked = set.needles.size() - set.distractors;
  EvalCase c;
  c.id = std::move(id);
  c.kind = kind;
  c.context = std::move(built.text);
  c.question = std::move(set.question);
  for (std::size_t i = 0; i < asked; ++i) c.expected.push_back(set.needles[i].answer);
  c.target_tokens = length;
  c.depths.assign(depths.begin(), depths.begin() + std::ptrdiff_t(asked));
  c.needles.assign(built.needles.begin(), built.needles.begin() + std::ptrdiff_t(asked));
  return c;
}

// The needles of a case of `kind`: `n` is the suite's needles per case.
NeedleSet needles_for(CaseKind kind, std::uint64_t seed, int n, std::string_view source) {
  switch (kind) {
    case CaseKind::niah:
      return make_code_needles(seed, 1, source);
    case CaseKind::niah_number_key:
      return make_code_needles(seed, 1, source, KeyKind::numbers);
    case CaseKind::multi_key:
      return make_multi_key_needles(seed, n, source);
    case CaseKind::multi_value:
      return make_multi_value_needles(seed, n, source);
    case CaseKind::multi_needle:
      return make_code_needles(seed, n, source);
    case CaseKind::variable_tracking:
      return make_variable_chain(seed, n, source);
    case CaseKind::passkey:
      return make_passkey(seed, source);
    case CaseKind::common_words:
    case CaseKind::custom:
      break;
  }
  throw Error(fmt::format("{} cases have no needles", to_string(kind)));
}

// The asked needle at `depth`, then any distractors evenly around the rest of the context:
// depth + k / n, wrapped into [0, 1), for k = 1 ... n - 1.
std::vector<double> depths_around(double depth, std::size_t n) {
  std::vector<double> depths = {depth};
  for (std::size_t k = 1; k < n; ++k) depths.push_back(std::fmod(depth + double(k) / n, 1.0));
  return depths;
}

// `n` needles spread evenly in context order: (i + offset) / n.
std::vector<double> spread(std::size_t n, double offset) {
  std::vector<double> depths;
  for (std::size_t i = 0; i < n; ++i) depths.push_back((double(i) + offset) / double(n));
  return depths;
}

std::string depth_id(CaseKind kind, std::int64_t length, double depth) {
  return fmt::format("{}-{}-d{:.2f}", to_string(kind), length, depth);
}

// "multi-value-4096" for the first sample at a length, "multi-value-4096-s2" for the second.
std::string sample_id(CaseKind kind, std::int64_t length, int sample) {
  const std::string id = fmt::format("{}-{}", to_string(kind), length);
  return sample == 1 ? id : fmt::format("{}-s{}", id, sample);
}

// The first sample's needles sit at (i + 0.5) / n; later samples shift them by a fraction of
// the spacing drawn from the case's seed, so that samples differ in where their needles are.
double spread_offset(int sample, std::uint64_t seed) {
  if (sample == 1) return 0.5;
  std::mt19937_64 rng(case_seed(seed, "offset"));  // a stream apart from the needles' own
  return draw_fraction(rng);
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

// What the cases of one kind are generated from.
struct KindInputs {
  CaseKind kind;
  const Suite& suite;
  std::string_view source;  // the haystack, or the passkey's classic filler
  const TokenCounter& count;
};

// One case per length x depth, its asked needle at the depth. The i-th NIAH case hides
// written[i % written.size()] when there are written needles.
void add_depth_cases(const KindInputs& in, std::span<const WrittenNeedle> written,
                     std::vector<EvalCase>& cases) {
  std::size_t next_written = 0;
  for (std::int64_t length : in.suite.lengths_of(in.kind)) {
    for (double depth : in.suite.depths) {
      const std::string id = depth_id(in.kind, length, depth);
      NeedleSet set =
          written.empty()
              ? needles_for(in.kind, case_seed(in.suite.seed, id), in.suite.needles, in.source)
              : written_needle_set(written[next_written++ % written.size()]);
      const std::vector<double> depths = depths_around(depth, set.needles.size());
      cases.push_back(
          needle_case(id, in.kind, length, in.source, std::move(set), depths, in.count));
    }
  }
}

// `suite.samples` cases per length, their needles spread over the context.
void add_spread_cases(const KindInputs& in, std::vector<EvalCase>& cases) {
  for (std::int64_t length : in.suite.lengths_of(in.kind)) {
    for (int sample = 1; sample <= in.suite.samples; ++sample) {
      const std::string id = sample_id(in.kind, length, sample);
      const std::uint64_t seed = case_seed(in.suite.seed, id);
      NeedleSet set = needles_for(in.kind, seed, in.suite.needles, in.source);
      const std::vector<double> depths = spread(set.needles.size(), spread_offset(sample, seed));
      cases.push_back(
          needle_case(id, in.kind, length, in.source, std::move(set), depths, in.count));
    }
  }
}

// `suite.samples` numbered word lists per length, from the haystack's words.
void add_common_words_cases(const KindInputs& in, std::vector<EvalCase>& cases) {
  const std::vector<std::string> vocabulary = list_vocabulary(in.source);
  for (std::int64_t length : in.suite.lengths_of(in.kind)) {
    for (int sample = 1; sample <= in.suite.samples; ++sample) {
      const std::string id = sample_id(in.kind, length, sample);
      WordList list = make_common_words(case_seed(in.suite.seed, id), in.suite.common_words, length,
                                        vocabulary, in.count);
      EvalCase c;
      c.id = id;
      c.kind = in.kind;
      c.context = std::move(list.context);
      c.question = std::move(list.question);
      c.expected = std::move(list.common);
      c.target_tokens = length;
      cases.push_back(std::move(c));
    }
  }
}

void add_kind(CaseKind kind, const Suite& suite, std::string_view haystack,
              const TokenCounter& count, std::span<const WrittenNeedle> written,
              std::vector<EvalCase>& cases) {
  const std::vector<std::int64_t>& lengths = suite.lengths_of(kind);
  if (lengths.empty()) return;
  const std::int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  const std::string filler =
      kind == CaseKind::passkey && suite.passkey_filler == PasskeyFiller::classic
          ? passkey_filler(longest, count)
          : std::string();
  const KindInputs in{kind, suite, filler.empty() ? haystack : filler, count};
  if (kind == CaseKind::common_words) {
    add_common_words_cases(in, cases);
  } else if (placed_by_depth(kind)) {
    add_depth_cases(in, kind == CaseKind::niah ? written : std::span<const WrittenNeedle>{}, cases);
  } else {
    add_spread_cases(in, cases);
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
