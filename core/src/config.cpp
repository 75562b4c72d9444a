#include "cocktail/config.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>
#include <utility>

#include "cocktail/error.hpp"
#include "toml_guard.hpp"

namespace cocktail {

namespace {

namespace fs = std::filesystem;

// Plugin and engine tables by dotted name ("engine", "planner.cocktail").
using Tables = std::map<std::string, Options>;

constexpr std::string_view kAllowedTables =
    "[engine], [quant], [model], [planner.<name>], [scorer.<name>], [backend.<name>]";
const std::vector<std::string> kLogLevels = {"trace", "debug", "info", "warn", "error", "off"};
const std::vector<std::string> kAxes = {"channel", "token"};
const std::vector<std::string> kRangeFits = {"min_max", "least_squares"};
const SourceLocation kCommandLine{"--set", 0};

bool is_plugin_kind(std::string_view name) {
  return name == "planner" || name == "scorer" || name == "backend";
}

// The tables that are not a plugin's: the engine's own, and the model runtime's.
bool is_fixed_table(std::string_view name) {
  return name == "engine" || name == "quant" || name == "model";
}

// A fixed table or "<kind>.<name>" with a plugin kind and a name without dots.
bool is_settings_table(const std::string& path) {
  if (is_fixed_table(path)) return true;
  const auto dot = path.find('.');
  if (dot == std::string::npos || dot + 1 == path.size()) return false;
  return is_plugin_kind(std::string_view(path).substr(0, dot)) &&
         path.find('.', dot + 1) == std::string::npos;
}

// The one place that formats errors is Options::fail; a scratch table borrows it.
[[noreturn]] void reject(const SourceLocation& where, const std::string& table,
                         const std::string& key, const std::string& what) {
  Options(table, where).fail(key, what);
}

// Rejects a key that is not inside a settings table: `table` is where it sits ("" at the top).
[[noreturn]] void reject_misplaced(const SourceLocation& where, const std::string& table,
                                   const std::string& key, bool is_table) {
  const std::string allowed = fmt::format("; allowed: {}", kAllowedTables);
  if (table.empty() && !is_table) {
    reject(where, "", key,
           fmt::format("is a top-level key; allowed: keys inside {}", kAllowedTables));
  }
  if (table.empty()) reject(where, "", "[" + key + "]", "is an unknown table" + allowed);
  reject(where, table, key, "is not a table" + allowed);
}

std::string type_name(toml::node_type type) {
  std::ostringstream out;
  out << type;
  return out.str();
}

std::vector<std::string> to_strings(const toml::array& array, const SourceLocation& where,
                                    const std::string& table, const std::string& key) {
  std::vector<std::string> strings;
  for (const toml::node& item : array) {
    const auto* s = item.as_string();
    if (!s) {
      reject(where, table, key,
             fmt::format("has an element of type {}; allowed: an array of strings",
                         type_name(item.type())));
    }
    strings.push_back(s->get());
  }
  return strings;
}

Options::Value to_value(const toml::node& node, const SourceLocation& where,
                        const std::string& table, const std::string& key) {
  if (const auto* b = node.as_boolean()) return b->get();
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* a = node.as_array()) return to_strings(*a, where, table, key);
  reject(where, table, key,
         fmt::format("is a {}; allowed: a boolean, integer, float, string or array of strings",
                     type_name(node.type())));
}

SourceLocation location_of(const toml::node& node, const std::string& file) {
  return {file, static_cast<int>(node.source().begin.line)};
}

void read_settings(const toml::table& table, const std::string& path, const std::string& file,
                   Tables& out) {
  Options options(path, location_of(table, file));
  for (const auto& [name, node] : table) {
    const std::string key(name.str());
    const SourceLocation where = location_of(node, file);
    options.set(key, to_value(node, where, path, key), where);
  }
  out.insert_or_assign(path, std::move(options));
}

void read_tables(const toml::table& root, const std::string& file, Tables& out) {
  for (const auto& [name, node] : root) {
    const std::string key(name.str());
    const auto* table = node.as_table();
    if (table && is_fixed_table(key)) {
      read_settings(*table, key, file, out);
      continue;
    }
    if (!table || !is_plugin_kind(key)) {
      reject_misplaced(location_of(node, file), "", key, table != nullptr);
    }
    // A plugin kind groups one table per plugin: [planner.cocktail], [planner.uniform], ...
    for (const auto& [plugin, plugin_node] : *table) {
      const std::string plugin_name(plugin.str());
      const auto* plugin_table = plugin_node.as_table();
      if (!plugin_table) reject_misplaced(location_of(plugin_node, file), key, plugin_name, false);
      read_settings(*plugin_table, key + "." + plugin_name, file, out);
    }
  }
}

toml::table parse_toml(const std::string& text, const std::string& file) {
  std::string safe_text;
  try {
    safe_text = toml_safe_text(text);
  } catch (const TomlHazard& h) {
    throw ConfigError(fmt::format("{}:{}:{}: syntax error: {}", file, h.line, h.column, h.what));
  }
  try {
    return toml::parse(safe_text, std::string_view(file));
  } catch (const toml::parse_error& e) {
    throw ConfigError(
        fmt::format("{}:{}: syntax error: {}", file, e.source().begin.line, e.description()));
  }
}

std::string trim(std::string_view s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return std::string(s.substr(begin, s.find_last_not_of(" \t") - begin + 1));
}

// A --set value is TOML when it parses as one value, and a plain string otherwise, so that
// `engine.backend=cpu` needs no quotes.
Options::Value parse_override_value(const std::string& text, const std::string& table,
                                    const std::string& key) {
  toml::table parsed;
  try {
    parsed = toml::parse(toml_safe_text("v = " + text));
  } catch (const TomlHazard&) {
    return text;
  } catch (const toml::parse_error&) {
    return text;
  }
  const toml::node* node = parsed.get("v");
  if (!node || parsed.size() != 1) return text;
  return to_value(*node, kCommandLine, table, key);
}

// Applies one "section.key=value": the last dotted component is the key, the rest the table.
// Returns the dotted key it set.
std::string apply_override(const std::string& text, Tables& tables) {
  const auto eq = text.find('=');
  const std::string path = trim(std::string_view(text).substr(0, eq));
  if (eq == std::string::npos || path.empty()) {
    reject(kCommandLine, "", text,
           eq == std::string::npos ? "has no '='; allowed: section.key=value"
                                   : "has no key; allowed: section.key=value");
  }
  const auto dot = path.rfind('.');
  const std::string table = dot == std::string::npos ? "" : path.substr(0, dot);
  const std::string key = path.substr(dot == std::string::npos ? 0 : dot + 1);
  if (key.empty()) reject(kCommandLine, "", path, "has an empty key; allowed: section.key=value");
  if (!is_settings_table(table)) {
    reject_misplaced(kCommandLine, "", table.empty() ? key : table, !table.empty());
  }
  const Options::Value value = parse_override_value(trim(text.substr(eq + 1)), table, key);
  tables.try_emplace(table, table, kCommandLine).first->second.set(key, value, kCommandLine);
  return table + "." + key;
}

Options take(Tables& tables, const std::string& name, const std::string& file) {
  auto node = tables.extract(name);
  return node ? std::move(node.mapped()) : Options(name, SourceLocation{file, 0});
}

// Backend, planner and scorer name plugins, so an empty name is never meant.
std::string get_name(Options& options, const std::string& key, const std::string& fallback) {
  std::string name = options.get_string(key, fallback);
  if (name.empty()) options.fail(key, "= \"\" is empty; allowed: the name of a plugin");
  return name;
}

EngineSettings read_engine(Options options, const fs::path& base) {
  EngineSettings engine;
  engine.backend = get_name(options, "backend", engine.backend);
  engine.device = options.get_index_or_name("device", engine.device);
  engine.planner = get_name(options, "planner", engine.planner);
  engine.scorer = get_name(options, "scorer", engine.scorer);
  engine.log_level = options.get_choice("log_level", engine.log_level, kLogLevels);
  for (const std::string& path : options.get_strings("plugin_paths", {})) {
    engine.plugin_paths.push_back((base / path).lexically_normal());
  }
  options.finish();
  return engine;
}

KvQuantLayout read_quant(Options options) {
  KvQuantLayout layout = EngineSettings{}.layout;
  const std::int64_t group = options.get_int("group_size", layout.group_size, 32, 1024);
  if (group % 32 != 0) {
    options.fail("group_size",
                 fmt::format("= {} is not a multiple of 32; allowed: a multiple of 32 from 32 "
                             "to 1024",
                             group));
  }
  layout.group_size = static_cast<int>(group);
  layout.key_axis = *parse_quant_axis(
      options.get_choice("key_axis", std::string(to_string(layout.key_axis)), kAxes));
  layout.value_axis = *parse_quant_axis(
      options.get_choice("value_axis", std::string(to_string(layout.value_axis)), kAxes));
  layout.range = *parse_range_fit(
      options.get_choice("range", std::string(to_string(layout.range)), kRangeFits));
  options.finish();
  return layout;
}

std::string read_file(const fs::path& file) {
  std::error_code error;
  if (!fs::is_regular_file(file, error)) {
    throw ConfigError(
        fmt::format("{}: cannot read the config file: no such file or not a file", file.string()));
  }
  std::ifstream in(file, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!in.is_open() || in.bad()) {
    throw ConfigError(fmt::format("{}: cannot read the config file", file.string()));
  }
  return text;
}

}  // namespace

Options Config::plugin_options(const std::string& kind, const std::string& name) const {
  const auto by_kind = plugins.find(kind);
  if (by_kind != plugins.end()) {
    const auto it = by_kind->second.find(name);
    if (it != by_kind->second.end()) return it->second;
  }
  return Options(kind + "." + name, SourceLocation{});
}

Config parse_config(const std::string& toml_text, const std::string& source_name,
                    const std::vector<std::string>& overrides) {
  Tables tables;
  read_tables(parse_toml(toml_text, source_name), source_name, tables);
  // Paths in a file are relative to its folder; paths typed with --set to the working folder.
  fs::path base = fs::path(source_name).parent_path();
  for (const std::string& text : overrides) {
    if (apply_override(text, tables) == "engine.plugin_paths") base.clear();
  }
  Config config;
  config.engine = read_engine(take(tables, "engine", source_name), base);
  config.engine.layout = read_quant(take(tables, "quant", source_name));
  config.model = take(tables, "model", source_name);
  for (auto& [path, options] : tables) {
    const auto dot = path.find('.');
    config.plugins[path.substr(0, dot)].insert_or_assign(path.substr(dot + 1), std::move(options));
  }
  return config;
}

Config load_config(const fs::path& file, const std::vector<std::string>& overrides) {
  return parse_config(read_file(file), file.string(), overrides);
}

}  // namespace cocktail
