#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cocktail/models/vocabulary.hpp"

namespace cocktail::models::detail {

struct Merge {
  std::int32_t rank;  // lower merges first
  TokenId result;     // the token the pair becomes
};

// BPE merges by (left token, right token): an open-addressing table, one cache miss a look-up
// in the common case, as encoding looks up every adjacent pair of every word.
class MergeTable {
 public:
  explicit MergeTable(std::size_t n_merges);

  // Adds the merge of (left, right), or gives the rank of the merge that pair already has.
  std::optional<std::int32_t> insert(TokenId left, TokenId right, Merge merge);
  const Merge* find(TokenId left, TokenId right) const;

 private:
  struct Slot {
    std::uint64_t key;  // kEmpty: free
    Merge merge;
  };
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};  // ids are not negative

  static std::uint64_t key_of(TokenId left, TokenId right) {
    return (std::uint64_t(std::uint32_t(left)) << 32) | std::uint32_t(right);
  }
  std::size_t home(std::uint64_t key) const;

  std::vector<Slot> slots_;
};

}  // namespace cocktail::models::detail
