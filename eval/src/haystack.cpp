#include "cocktail/eval/haystack.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "cocktail/error.hpp"
#include "text_file.hpp"

namespace cocktail::eval {

namespace {

namespace fs = std::filesystem;

std::string_view trimmed(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

std::vector<fs::path> text_files(const fs::path& folder) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    throw Error(
        fmt::format("the haystack folder {} does not exist or is not a folder", folder.string()));
  }
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    if (entry.is_regular_file() && entry.path().extension() == ".txt") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::string load_haystack(const fs::path& folder) {
  std::string haystack;
  for (const fs::path& file : text_files(folder)) {
    const std::string text = read_text_file(file, "the haystack file");
    const std::string_view body = trimmed(text);
    if (body.empty()) continue;
    if (!haystack.empty()) haystack += "\n\n";
    haystack += body;
  }
  if (haystack.empty()) {
    throw Error(fmt::format("the haystack folder {} has no .txt file with text", folder.string()));
  }
  return haystack;
}

}  // namespace cocktail::eval
