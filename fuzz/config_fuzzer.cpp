// A TOML config and --set overrides: the input up to the first NUL byte is the document, each
// NUL-separated piece after it one override. Parsing must give a Config or throw ConfigError.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/config.hpp"
#include "cocktail/error.hpp"

namespace {

std::vector<std::string> split_at_nul(std::string_view text) {
  std::vector<std::string> parts;
  while (true) {
    const std::size_t end = text.find('\0');
    parts.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) return parts;
    text.remove_prefix(end + 1);
  }
}

// Reads what the engine and the plugins read back from a parsed config.
void read_back(const cocktail::Config& config) {
  for (const auto& [kind, plugins] : config.plugins) {
    for (const auto& [name, options] : plugins) (void)config.plugin_options(kind, name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> parts =
      split_at_nul(std::string_view(reinterpret_cast<const char*>(data), size));
  const std::string document = std::move(parts.front());
  parts.erase(parts.begin());
  try {
    read_back(cocktail::parse_config(document, "fuzz/config.toml", parts));
  } catch (const cocktail::ConfigError&) {
    // A refused config is the expected outcome for most inputs.
  }
  return 0;
}
