#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace cocktail::eval {

// A whole file as bytes; throws Error "cannot read <what> <path>" naming the path.
std::string read_text_file(const std::filesystem::path& file, std::string_view what);

}  // namespace cocktail::eval
