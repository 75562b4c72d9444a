#pragma once

#include <filesystem>
#include <string>

namespace cocktail::eval {

// The haystack text: every *.txt file directly in `folder`, in sorted name order, trimmed and
// joined with one blank line. Throws Error naming the folder when it is missing or holds no
// text.
std::string load_haystack(const std::filesystem::path& folder);

}  // namespace cocktail::eval
