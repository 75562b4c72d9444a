#include "cocktail/eval/suite.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <limits>
#include <sstream>

#include "cocktail/error.hpp"
#include "cocktail/options.hpp"
#include "text_file.hpp"

namespace cocktail::eval {

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kKeys = {"cases",        "common_words",   "depths",  "haystack",
                                        "kind_lengths", "kinds",          "lengths", "needle_file",
                                        "needles",      "passkey_filler", "samples", "seed"};
constexpr std::int64_t kMinLength = 64, kMaxLength = std::int64_t{1} << 20;

SourceLocation location_of(const toml::node& node, const std::string& file) {
  return {file, static_cast<int>(node.source().begin.line)};
}

// Errors share the config's wording: Options::fail formats "file:line: key what".
[[noreturn]] void reject(const SourceLocation& where, const std::string& key,
                         const std::string& what) {
  Options("", where).fail(key, what);
}

std::string shown(const toml::node& node) {
  std::ostringstream out;
  node.visit([&out](const auto& value) { out << value; });
  return out.str();
}

// The suite's keys besides the number arrays, for the typed getters of Options.
Options::Value to_value(const toml::node& node, const SourceLocation& where,
                        const std::string& key) {
  if (const auto* b = node.as_boolean()) return b->get();
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* a = node.as_array()) {
    std::vector<std::string> strings;
    for (const toml::node& item : *a) {
      const auto* s = item.as_string();
      if (!s) reject(where, key, fmt::format("= {} has the wrong type", shown(node)));
      strings.push_back(s->get());
    }
    return strings;
  }
  reject(where, key, fmt::format("= {} has the wrong type", shown(node)));
}

// A non-empty array of distinct numbers in [lo, hi]; integers only when `integers`.
std::vector<double> read_numbers(const toml::node& node, const SourceLocation& where,
                                 const std::string& key, double lo, double hi, bool integers) {
  const std::string allowed = fmt::format("allowed: a non-empty array of distinct {} from {} to {}",
                                          integers ? "integers" : "numbers", lo, hi);
  const auto* array = node.as_array();
  if (!array || array->empty())
    reject(where, key, fmt::format("= {} is not {}", shown(node), allowed));
  std::vector<double> numbers;
  for (const toml::node& item : *array) {
    std::optional<double> value;
    if (const auto* i = item.as_integer()) value = static_cast<double>(i->get());
    if (const auto* f = item.as_floating_point(); f && !integers) value = f->get();
    if (!value || !(*value >= lo && *value <= hi) ||
        std::find(numbers.begin(), numbers.end(), *value) != numbers.end()) {
      reject(where, key,
             fmt::format("= {} has the element {}; {}", shown(node), shown(item), allowed));
    }
    numbers.push_back(*value);
  }
  return numbers;
}

std::vector<CaseKind> read_kinds(Options& options, const std::vector<CaseKind>& fallback) {
  std::vector<std::string> names;
  for (CaseKind kind : fallback) names.emplace_back(to_string(kind));
  std::vector<CaseKind> kinds;
  for (const std::string& name : options.get_strings("kinds", names)) {
    const std::optional<CaseKind> kind = parse_case_kind(name);
    if (!kind || *kind == CaseKind::custom ||
        std::find(kinds.begin(), kinds.end(), *kind) != kinds.end()) {
      options.fail("kinds", fmt::format("has \"{}\"; allowed: distinct names from {} (custom "
                                        "cases come from `cases`)",
                                        name, generated_kind_names()));
    }
    kinds.push_back(*kind);
  }
  return kinds;
}

std::vector<std::int64_t> read_lengths(const toml::node& node, const SourceLocation& where,
                                       const std::string& key) {
  std::vector<std::int64_t> lengths;
  for (double n : read_numbers(node, where, key, kMinLength, kMaxLength, true)) {
    lengths.push_back(static_cast<std::int64_t>(n));
  }
  return lengths;
}

// [kind_lengths]: each key a kind in `kinds`, each value an array as `lengths` takes.
std::map<CaseKind, std::vector<std::int64_t>> read_kind_lengths(
    const toml::node& node, const std::string& file, const std::vector<CaseKind>& kinds) {
  const auto* table = node.as_table();
  if (!table) {
    reject(location_of(node, file), "kind_lengths",
           fmt::format("= {} is not a table; allowed: a table of kind = [lengths]", shown(node)));
  }
  std::map<CaseKind, std::vector<std::int64_t>> lengths;
  for (const auto& [name, entry] : *table) {
    const std::string key = fmt::format("kind_lengths.{}", name.str());
    const SourceLocation where = location_of(entry, file);
    const std::optional<CaseKind> kind = parse_case_kind(name.str());
    if (!kind || std::find(kinds.begin(), kinds.end(), *kind) == kinds.end()) {
      std::vector<std::string> generated;
      for (CaseKind k : kinds) generated.emplace_back(to_string(k));
      reject(where, key,
             fmt::format("is not a kind the suite generates; allowed: a kind from `kinds` ({})",
                         fmt::join(generated, ", ")));
    }
    lengths[*kind] = read_lengths(entry, where, key);
  }
  return lengths;
}

std::optional<fs::path> read_path(Options& options, const std::string& key, const fs::path& base) {
  if (!options.contains(key)) return std::nullopt;
  const std::string path = options.get_string(key, "");
  if (path.empty()) options.fail(key, "= \"\" is empty; allowed: a path");
  return (base / path).lexically_normal();
}

toml::table parse_toml(const std::string& text, const std::string& file) {
  try {
    return toml::parse(text, std::string_view(file));
  } catch (const toml::parse_error& e) {
    throw ConfigError(
        fmt::format("{}:{}: syntax error: {}", file, e.source().begin.line, e.description()));
  }
}

}  // namespace

const std::vector<std::int64_t>& Suite::lengths_of(CaseKind kind) const {
  const auto own = kind_lengths.find(kind);
  return own == kind_lengths.end() ? lengths : own->second;
}

bool Suite::needs_haystack() const {
  for (CaseKind kind : kinds) {
    if (kind != CaseKind::passkey || passkey_filler == PasskeyFiller::haystack) return true;
  }
  return false;
}

Suite builtin_suite() {
  Suite suite;
  suite.source = "builtin";
  suite.lengths = {1024, 2048, 4096, 8192};
  suite.depths = {0.0, 0.25, 0.5, 0.75, 1.0};
  suite.kinds = {CaseKind::niah, CaseKind::multi_needle, CaseKind::passkey};
  return suite;
}

Suite parse_suite(const std::string& toml_text, const std::string& source_name) {
  const toml::table root = parse_toml(toml_text, source_name);
  Suite suite = builtin_suite();
  suite.source = source_name;
  Options options("", SourceLocation{source_name, 0});
  const toml::node* kind_lengths = nullptr;  // read once `kinds` is known
  for (const auto& [name, node] : root) {
    const std::string key(name.str());
    const SourceLocation where = location_of(node, source_name);
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      reject(where, key, fmt::format("is an unknown key; known keys: {}", fmt::join(kKeys, ", ")));
    }
    if (key == "lengths") {
      suite.lengths = read_lengths(node, where, key);
    } else if (key == "kind_lengths") {
      kind_lengths = &node;
    } else if (key == "depths") {
      suite.depths = read_numbers(node, where, key, 0.0, 1.0, false);
    } else {
      options.set(key, to_value(node, where, key), where);
    }
  }
  const fs::path base = fs::path(source_name).parent_path();
  suite.haystack = read_path(options, "haystack", base);
  suite.cases = read_path(options, "cases", base);
  suite.needle_file = read_path(options, "needle_file", base);
  suite.kinds = read_kinds(options, suite.kinds);
  if (kind_lengths) suite.kind_lengths = read_kind_lengths(*kind_lengths, source_name, suite.kinds);
  suite.needles = static_cast<int>(options.get_int("needles", suite.needles, 2, 16));
  suite.samples = static_cast<int>(options.get_int("samples", suite.samples, 1, 100));
  suite.common_words = static_cast<int>(options.get_int("common_words", suite.common_words, 1, 50));
  suite.seed = static_cast<std::uint64_t>(options.get_int(
      "seed", static_cast<std::int64_t>(suite.seed), 0, std::numeric_limits<std::int64_t>::max()));
  suite.passkey_filler =
      options.get_choice("passkey_filler", "classic", {"classic", "haystack"}) == "classic"
          ? PasskeyFiller::classic
          : PasskeyFiller::haystack;
  options.finish();
  if (suite.kinds.empty() && !suite.cases) {
    options.fail("kinds",
                 "is empty and no `cases` file is given; allowed: at least one kind or "
                 "a cases file");
  }
  if (suite.needle_file &&
      std::find(suite.kinds.begin(), suite.kinds.end(), CaseKind::niah) == suite.kinds.end()) {
    options.fail("needle_file", "is given but `kinds` has no niah; allowed: only with niah cases");
  }
  return suite;
}

Suite load_suite(const fs::path& file) {
  std::string text;
  try {
    text = read_text_file(file, "the suite file");
  } catch (const Error& e) {
    throw ConfigError(e.what());
  }
  return parse_suite(text, file.string());
}

}  // namespace cocktail::eval
