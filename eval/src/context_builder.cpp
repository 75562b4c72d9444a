#include "cocktail/eval/context_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cocktail/error.hpp"

namespace cocktail::eval {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Byte offsets up to `limit` just after each word: where a cut leaves no trailing whitespace.
std::vector<std::size_t> word_ends(std::string_view text, std::size_t limit) {
  std::vector<std::size_t> ends;
  for (std::size_t i = 1; i <= limit; ++i) {
    if (!is_space(text[i - 1]) && (i == text.size() || is_space(text[i]))) ends.push_back(i);
  }
  return ends;
}

bool starts_sentence(std::string_view text, std::size_t i) {
  if (i == 0 || i == text.size()) return true;
  if (is_space(text[i]) || !is_space(text[i - 1])) return false;
  std::size_t j = i;
  while (j > 0 && is_space(text[j - 1])) {
    if (text[j - 1] == '\n') return true;
    --j;
  }
  return j > 0 && (text[j - 1] == '.' || text[j - 1] == '!' || text[j - 1] == '?');
}

struct Insertion {
  std::size_t at = 0;
  std::size_t placement = 0;
};

BuiltContext insert_needles(std::string_view base, const std::vector<NeedlePlacement>& needles) {
  std::vector<Insertion> insertions;
  for (std::size_t i = 0; i < needles.size(); ++i) {
    const double depth = std::clamp(needles[i].depth, 0.0, 1.0);
    const auto target = static_cast<std::size_t>(std::lround(depth * double(base.size())));
    insertions.push_back({sentence_start_near(base, target), i});
  }
  // Stable, so needles at one boundary keep their given order.
  std::stable_sort(insertions.begin(), insertions.end(),
                   [](const Insertion& a, const Insertion& b) { return a.at < b.at; });
  BuiltContext built;
  built.needles.resize(needles.size());
  std::size_t copied = 0;
  for (const Insertion& insertion : insertions) {
    built.text.append(base.substr(copied, insertion.at - copied));
    copied = insertion.at;
    // A needle at the very end follows the text after a space; elsewhere it precedes a sentence.
    const bool at_end = insertion.at == base.size();
    if (at_end && !built.text.empty()) built.text += ' ';
    const std::string& sentence = needles[insertion.placement].sentence;
    built.needles[insertion.placement] = {built.text.size(), built.text.size() + sentence.size()};
    built.text += sentence;
    if (!at_end) built.text += ' ';
  }
  built.text.append(base.substr(copied));
  return built;
}

// A prefix long enough to hold more than `max_tokens` tokens (or all of `text`), found by
// doubling, so a large haystack is never tokenized whole.
std::size_t search_window(std::string_view text, std::int64_t max_tokens,
                          const TokenCounter& count) {
  // English text has fewer than one token per 6 bytes, so the first guess is usually enough.
  std::size_t window = std::min(text.size(), static_cast<std::size_t>(max_tokens) * 6 + 64);
  while (window < text.size() && count(text.substr(0, window)) <= max_tokens) {
    window = std::min(text.size(), window * 2);
  }
  return window;
}

}  // namespace

std::size_t largest_fitting(std::size_t most, const std::function<bool(std::size_t)>& fits) {
  std::size_t lo = 0, hi = most;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

std::size_t fit_prefix(std::string_view text, std::int64_t max_tokens, const TokenCounter& count) {
  if (max_tokens <= 0) return 0;
  const std::vector<std::size_t> ends = word_ends(text, search_window(text, max_tokens, count));
  // The number of word ends whose prefix fits.
  const std::size_t words = largest_fitting(
      ends.size(), [&](std::size_t n) { return count(text.substr(0, ends[n - 1])) <= max_tokens; });
  return words == 0 ? 0 : ends[words - 1];
}

std::size_t sentence_start_near(std::string_view text, std::size_t pos) {
  pos = std::min(pos, text.size());
  for (std::size_t distance = 0;; ++distance) {
    if (pos >= distance && starts_sentence(text, pos - distance)) return pos - distance;
    if (pos + distance <= text.size() && starts_sentence(text, pos + distance)) {
      return pos + distance;
    }
  }
}

BuiltContext build_context(std::string_view source, std::int64_t target_tokens,
                           const std::vector<NeedlePlacement>& needles, const TokenCounter& count) {
  std::string all_needles;
  for (const NeedlePlacement& needle : needles) all_needles += needle.sentence + " ";
  std::int64_t budget = target_tokens - count(all_needles);
  // Tokens do not add up exactly across a cut, so the fit is checked and tightened.
  for (int attempt = 0; attempt < 8 && budget > 0; ++attempt) {
    const std::size_t cut = fit_prefix(source, budget, count);
    if (cut == source.size() && count(source) < budget) {
      throw Error(
          fmt::format("the haystack has {} tokens, fewer than the {} a {}-token context "
                      "needs; give a folder with more text",
                      count(source), budget, target_tokens));
    }
    BuiltContext built = insert_needles(source.substr(0, cut), needles);
    const std::int64_t total = count(built.text);
    if (total <= target_tokens) return built;
    budget -= total - target_tokens;
  }
  throw Error(fmt::format("cannot fit the needles into a {}-token context", target_tokens));
}

}  // namespace cocktail::eval
