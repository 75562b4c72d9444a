#include "text_file.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iterator>

#include "cocktail/error.hpp"

namespace cocktail::eval {

std::string read_text_file(const std::filesystem::path& file, std::string_view what) {
  std::error_code error;
  // An ifstream opens a folder without complaint on Linux, so regular files are checked first.
  if (!std::filesystem::is_regular_file(file, error)) {
    throw Error(fmt::format("cannot read {} {}: no such file", what, file.string()));
  }
  std::ifstream in(file, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!in.is_open() || in.bad()) throw Error(fmt::format("cannot read {} {}", what, file.string()));
  return text;
}

}  // namespace cocktail::eval
