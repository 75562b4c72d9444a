#include "cocktail/eval/common_words.hpp"

#include <fmt/format.h>

#include <cctype>
#include <random>
#include <set>

#include "cocktail/error.hpp"
#include "seeded_random.hpp"

namespace cocktail::eval {

namespace {

constexpr std::string_view kInstructions =
    "Below is a numbered list of words. In these words, some appear more often than others. "
    "Memorize the ones that appear most often.";
constexpr std::string_view kQuestion = "What are the {} most common words in the above list?";
constexpr std::size_t kMinLetters = 4;

// The runs of ASCII letters in `text`, lower-cased, that have at least kMinLetters letters.
std::set<std::string> letter_words(std::string_view text) {
  std::set<std::string> words;
  std::string word;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const unsigned char c = i < text.size() ? static_cast<unsigned char>(text[i]) : 0;
    if (c < 0x80 && std::isalpha(c)) {
      word += static_cast<char>(std::tolower(c));
      continue;
    }
    if (word.size() >= kMinLetters) words.insert(word);
    word.clear();
  }
  return words;
}

// "1. harbour 2. lantern 3. harbour"
std::string numbered(const std::vector<std::string_view>& entries) {
  std::string text;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    text += fmt::format("{}{}. {}", i == 0 ? "" : " ", i + 1, entries[i]);
  }
  return text;
}

}  // namespace

std::vector<std::string> list_vocabulary(std::string_view text) {
  std::set<std::string> words = letter_words(text);
  for (const std::string& own :
       letter_words(std::string(kInstructions) + " " + std::string(kQuestion))) {
    words.erase(own);
  }
  return {words.begin(), words.end()};
}

WordRepeats word_repeats(std::int64_t max_tokens) {
  return max_tokens >= 4096 ? WordRepeats{30, 3} : WordRepeats{6, 1};
}

WordList make_common_words(std::uint64_t seed, int common, std::int64_t max_tokens,
                           std::span<const std::string> vocabulary, const TokenCounter& count) {
  const auto n_common = static_cast<std::size_t>(std::max(common, 0));
  if (common < 1 || n_common >= vocabulary.size()) {
    throw Error(fmt::format(
        "cannot draw {} common words and others from the haystack's {} distinct words of {} or "
        "more letters",
        common, vocabulary.size(), kMinLetters));
  }
  std::mt19937_64 rng(seed);
  std::vector<std::string> pool(vocabulary.begin(), vocabulary.end());
  shuffle(pool, rng);
  const std::uint64_t order_seed = rng();
  const WordRepeats repeats = word_repeats(max_tokens);
  // The same order seed for every length tried, so the search sees one list growing.
  const auto list_with = [&](std::size_t others) {
    std::vector<std::string_view> entries;
    for (std::size_t i = 0; i < n_common + others; ++i) {
      const int times = i < n_common ? repeats.common : repeats.other;
      entries.insert(entries.end(), std::size_t(times), pool[i]);
    }
    std::mt19937_64 order(order_seed);
    shuffle(entries, order);
    return std::string(kInstructions) + "\n" + numbered(entries);
  };
  const auto fits = [&](std::size_t others) { return count(list_with(others)) <= max_tokens; };
  if (!fits(0)) {
    throw Error(fmt::format("{} common words, {} times each, do not fit in {} tokens", common,
                            repeats.common, max_tokens));
  }
  const std::size_t most = pool.size() - n_common;
  const std::size_t others = largest_fitting(most, fits);
  if (others == most) {
    throw Error(fmt::format(
        "the haystack has {} distinct words of {} or more letters, too few for a {}-token "
        "common-words list; give a folder with more text",
        vocabulary.size(), kMinLetters, max_tokens));
  }
  return {list_with(others),
          fmt::format(fmt::runtime(kQuestion), common),
          {pool.begin(), pool.begin() + std::ptrdiff_t(n_common)}};
}

}  // namespace cocktail::eval
