#include "cli_common.hpp"

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cocktail/error.hpp"

namespace cocktail::cli {

void ConfigArgs::add_to(CLI::App& command, bool required) {
  auto* option = command.add_option("--config", file, "TOML config file (see docs/config.md)");
  if (required) option->required();
  command.add_option("--set", overrides, "Override a config key: section.key=value (repeatable)");
}

Config ConfigArgs::load() const {
  return file.empty() ? parse_config("", "<defaults>", overrides) : load_config(file, overrides);
}

void ContextArgs::add_to(CLI::App& command) {
  auto* from_file = command.add_option("--context-file", file,
                                       "Context text file (default: the built-in sample document)");
  from_file->excludes(command.add_option("--context", text, "Context text"));
}

std::string ContextArgs::load() const {
  if (!file.empty()) return read_text_file(file);
  return text.empty() ? std::string(kSampleContext) : text;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json plan_chunks_json(const Plan& plan) {
  nlohmann::json chunks = nlohmann::json::array();
  for (const ChunkPlan& c : plan.chunks) {
    chunks.push_back({{"index", c.index},
                      {"first_token", c.first_token},
                      {"n_tokens", c.n_tokens},
                      {"score", std::isnan(c.score) ? nlohmann::json() : nlohmann::json(c.score)},
                      {"precision", to_string(c.precision)}});
  }
  return chunks;
}

void print_json(const nlohmann::json& j) {
  std::cout << j.dump(2) << "\n";
}

std::string human_bytes(std::size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = double(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  std::ostringstream out;
  out.precision(unit == 0 ? 0 : 1);
  out << std::fixed << value << " " << units[unit];
  return out.str();
}

}  // namespace cocktail::cli
