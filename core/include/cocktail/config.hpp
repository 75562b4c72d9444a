#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cocktail/options.hpp"
#include "cocktail/quant_spec.hpp"

namespace cocktail {

// The engine's own settings ([engine] and [quant]); plugin tables stay as Options for the
// plugin to validate. Every key is documented in docs/config.md. The defaults are
// configs/default.toml's, the configuration chosen by measurement (docs/config.md, "How the
// default is chosen"): the budget planner with the attention scorer and least-squares ranges.
struct EngineSettings {
  std::string backend = "auto";
  // The backend's device, by index ("0") or by name; empty: its first device that can run.
  std::string device;
  std::string planner = "budget";
  std::string scorer = "attention";
  std::string log_level = "info";
  std::vector<std::filesystem::path> plugin_paths;
  KvQuantLayout layout{.range = RangeFit::least_squares};
};

struct Config {
  EngineSettings engine;
  // [model], read and validated by the model runtime (models/), not by the engine.
  Options model;
  // Plugin tables by kind and name: plugins["planner"]["cocktail"] is [planner.cocktail].
  std::map<std::string, std::map<std::string, Options>> plugins;

  // Options for one plugin (an empty table when the file has none).
  Options plugin_options(const std::string& kind, const std::string& name) const;
};

// Parses TOML text. `overrides` are "section.key=value" strings from --set, applied on top
// (the value is parsed as TOML, falling back to a plain string). Throws ConfigError with file,
// line, key and what is allowed.
Config parse_config(const std::string& toml_text, const std::string& source_name,
                    const std::vector<std::string>& overrides = {});
Config load_config(const std::filesystem::path& file,
                   const std::vector<std::string>& overrides = {});

}  // namespace cocktail
