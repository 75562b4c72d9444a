#include "merge_table.hpp"

#include <bit>

namespace cocktail::models::detail {

MergeTable::MergeTable(std::size_t n_merges)
    : slots_(std::bit_ceil(2 * n_merges + 2), Slot{kEmpty, Merge{0, 0}}) {}

std::optional<std::int32_t> MergeTable::insert(TokenId left, TokenId right, Merge merge) {
  const std::uint64_t key = key_of(left, right);
  std::size_t s = home(key);
  for (; slots_[s].key != kEmpty; s = (s + 1) & (slots_.size() - 1)) {
    if (slots_[s].key == key) return slots_[s].merge.rank;
  }
  slots_[s] = {key, merge};
  return std::nullopt;
}

const Merge* MergeTable::find(TokenId left, TokenId right) const {
  const std::uint64_t key = key_of(left, right);
  for (std::size_t s = home(key); slots_[s].key != kEmpty; s = (s + 1) & (slots_.size() - 1)) {
    if (slots_[s].key == key) return &slots_[s].merge;
  }
  return nullptr;
}

// Fibonacci hashing: the high bits of key * 2^64/phi pick the slot.
std::size_t MergeTable::home(std::uint64_t key) const {
  const int shift = 64 - std::countr_zero(slots_.size());
  return std::size_t((key * 0x9E3779B97F4A7C15ull) >> shift);
}

}  // namespace cocktail::models::detail
