#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/models/vocabulary.hpp"

namespace cocktail::models::detail {

// Token ids by text: an open-addressing table over the vocabulary's strings (two cache misses
// a look-up where a node-based map takes four). It points into `tokens`, which must outlive it
// and stay where it is.
class TokenIndex {
 public:
  // Throws cocktail::Error for an empty token or a text that two tokens share.
  explicit TokenIndex(const std::vector<std::string>& tokens);

  std::optional<TokenId> find(std::string_view text) const;

 private:
  struct Slot {
    std::uint32_t hash;  // the low bits of the text's hash, to skip most string compares
    TokenId id;          // -1: empty
  };

  std::size_t home(std::size_t hash) const;

  const std::vector<std::string>* tokens_;
  std::vector<Slot> slots_;
};

}  // namespace cocktail::models::detail
