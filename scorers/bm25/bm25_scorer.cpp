#include "bm25_scorer.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace cocktail::scorers {
namespace {

bool is_term_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80;
}

unsigned char ascii_lower(unsigned char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<unsigned char>(c - 'A' + 'a') : c;
}

// A chunk's terms, sorted so that counting one is a binary search.
struct Document {
  std::vector<std::string> terms;

  explicit Document(std::string_view text) : terms(Bm25Scorer::terms(text)) {
    std::sort(terms.begin(), terms.end());
  }
  double length() const { return static_cast<double>(terms.size()); }
  double count(const std::string& term) const {
    const auto [first, last] = std::equal_range(terms.begin(), terms.end(), term);
    return static_cast<double>(last - first);
  }
};

double idf(const std::vector<Document>& docs, const std::string& term) {
  const auto df = static_cast<double>(std::count_if(
      docs.begin(), docs.end(), [&](const Document& d) { return d.count(term) > 0.0; }));
  const auto n = static_cast<double>(docs.size());
  return std::log(1.0 + (n - df + 0.5) / (df + 0.5));
}

}  // namespace

Bm25Scorer::Bm25Scorer(Options& opts)
    : k1_(opts.get_double("k1", 1.2, 0.0, 10.0)), b_(opts.get_double("b", 0.75, 0.0, 1.0)) {}

std::vector<std::string> Bm25Scorer::terms(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  for (char ch : text) {
    const unsigned char c = ascii_lower(static_cast<unsigned char>(ch));
    if (is_term_byte(c)) {
      current.push_back(static_cast<char>(c));
    } else if (!current.empty()) {
      out.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

std::vector<double> Bm25Scorer::score(const ScoringInput& input) {
  if (input.chunk_texts.empty()) return {};
  std::vector<Document> docs;
  double total_length = 0.0;
  for (const std::string& text : input.chunk_texts) {
    docs.emplace_back(text);
    total_length += docs.back().length();
  }
  const double avg_length = total_length / static_cast<double>(docs.size());

  std::vector<double> scores(docs.size(), 0.0);
  for (const std::string& term : terms(input.query)) {
    const double term_idf = idf(docs, term);
    for (std::size_t i = 0; i < docs.size(); ++i) {
      const double tf = docs[i].count(term);
      // Skipping absent terms also avoids 0/0 when every chunk is empty (avglen 0).
      if (tf == 0.0) continue;
      const double norm = 1.0 - b_ + b_ * docs[i].length() / avg_length;
      scores[i] += term_idf * tf * (k1_ + 1.0) / (tf + k1_ * norm);
    }
  }
  return scores;
}

}  // namespace cocktail::scorers
