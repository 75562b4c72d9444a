#pragma once

// A guard in front of Debian's toml++ 3.3, which reaches an unreachable branch (undefined
// behaviour) on some non-ASCII characters; see toml_guard.cpp.

#include <string>
#include <string_view>

namespace cocktail {

// Where a text cannot go to toml++: line and column (in characters) from 1.
struct TomlHazard {
  int line = 0;
  int column = 0;
  std::string what;
};

// The text toml++ 3.3 can take safely, meaning what `text` means; throws TomlHazard where it
// cannot be made so (the text was no valid TOML there either).
std::string toml_safe_text(std::string_view text);

}  // namespace cocktail
