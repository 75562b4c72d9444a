#include "token_index.hpp"

#include <bit>
#include <functional>

#include "cocktail/error.hpp"
#include "quoted.hpp"

namespace cocktail::models::detail {

TokenIndex::TokenIndex(const std::vector<std::string>& tokens)
    : tokens_(&tokens), slots_(std::bit_ceil(2 * tokens.size() + 2), Slot{0, -1}) {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& text = tokens[i];
    if (text.empty()) throw Error("vocabulary token " + std::to_string(i) + " is empty");
    const std::size_t hash = std::hash<std::string_view>{}(text);
    std::size_t s = home(hash);
    for (; slots_[s].id >= 0; s = (s + 1) & (slots_.size() - 1)) {
      if (slots_[s].hash == std::uint32_t(hash) && tokens[std::size_t(slots_[s].id)] == text) {
        throw Error("vocabulary tokens " + std::to_string(slots_[s].id) + " and " +
                    std::to_string(i) + " are both " + quoted(text));
      }
    }
    slots_[s] = {std::uint32_t(hash), TokenId(i)};
  }
}

std::optional<TokenId> TokenIndex::find(std::string_view text) const {
  const std::size_t hash = std::hash<std::string_view>{}(text);
  for (std::size_t s = home(hash); slots_[s].id >= 0; s = (s + 1) & (slots_.size() - 1)) {
    if (slots_[s].hash == std::uint32_t(hash) && (*tokens_)[std::size_t(slots_[s].id)] == text) {
      return slots_[s].id;
    }
  }
  return std::nullopt;
}

// The high bits of the hash pick the slot; the low bits are kept in it.
std::size_t TokenIndex::home(std::size_t hash) const {
  const int shift = 64 - std::countr_zero(slots_.size());
  return std::size_t((std::uint64_t(hash) * 0x9E3779B97F4A7C15ull) >> shift);
}

}  // namespace cocktail::models::detail
