#include "cocktail/models/vocabulary.hpp"

#include <string>

#include "cocktail/error.hpp"
#include "quoted.hpp"
#include "vocabulary_check.hpp"

namespace cocktail::models {

namespace {

using detail::quoted;

bool is_token_type(TokenType type) {
  const auto v = static_cast<std::int32_t>(type);
  return v >= static_cast<std::int32_t>(TokenType::normal) &&
         v <= static_cast<std::int32_t>(TokenType::byte);
}

void check_types(const Vocabulary& v) {
  if (v.types.size() != v.tokens.size()) {
    throw Error("vocabulary has " + std::to_string(v.tokens.size()) + " tokens but " +
                std::to_string(v.types.size()) + " token types");
  }
  for (std::size_t i = 0; i < v.types.size(); ++i) {
    if (!is_token_type(v.types[i])) {
      throw Error("vocabulary token " + std::to_string(i) + " " + quoted(v.tokens[i]) +
                  " has type " + std::to_string(static_cast<std::int32_t>(v.types[i])) +
                  ", not a GGUF token type (1 normal, 2 unknown, 3 control, 4 user-defined, "
                  "5 unused, 6 byte)");
    }
  }
}

void check_special(const Vocabulary& v, const char* name, const std::optional<TokenId>& id) {
  if (id && (*id < 0 || std::size_t(*id) >= v.tokens.size())) {
    throw Error(std::string("vocabulary ") + name + " id " + std::to_string(*id) +
                " is out of range (" + std::to_string(v.tokens.size()) + " tokens)");
  }
}

detail::MergeTable check_merges(const Vocabulary& v, const detail::TokenIndex& index) {
  detail::MergeTable table(v.merges.size());
  std::string joined;
  for (std::size_t rank = 0; rank < v.merges.size(); ++rank) {
    const std::string& merge = v.merges[rank];
    const auto error = [&](const std::string& what) {
      return Error("vocabulary merge " + std::to_string(rank) + " " + quoted(merge) + what);
    };
    // As llama.cpp splits: at the first space after the first byte.
    const std::size_t space = merge.find(' ', 1);
    if (space == std::string::npos) throw error(" is not two tokens separated by a space");
    const std::string_view left = std::string_view(merge).substr(0, space);
    const std::string_view right = std::string_view(merge).substr(space + 1);
    const std::optional<TokenId> l = index.find(left);
    const std::optional<TokenId> r = index.find(right);
    if (!l) throw error(": its left part " + quoted(left) + " is not a token");
    if (!r) throw error(": its right part " + quoted(right) + " is not a token");
    joined.assign(left).append(right);
    const std::optional<TokenId> result = index.find(joined);
    if (!result) throw error(": the merged " + quoted(joined) + " is not a token");
    if (const auto earlier = table.insert(*l, *r, {std::int32_t(rank), *result})) {
      throw error(" repeats merge " + std::to_string(*earlier));
    }
  }
  return table;
}

}  // namespace

namespace detail {

CheckedVocabulary check_vocabulary(const Vocabulary& v) {
  if (v.tokens.empty()) throw Error("vocabulary has no tokens");
  check_types(v);
  TokenIndex index(v.tokens);
  check_special(v, "bos", v.bos);
  check_special(v, "eos", v.eos);
  check_special(v, "unk", v.unk);
  check_special(v, "pad", v.pad);
  if (v.add_bos && !v.bos) throw Error("vocabulary asks to add BOS but has no bos id");
  MergeTable merges = check_merges(v, index);
  return {std::move(index), std::move(merges)};
}

}  // namespace detail

void Vocabulary::validate() const {
  detail::check_vocabulary(*this);
}

}  // namespace cocktail::models
