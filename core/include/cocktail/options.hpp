#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "cocktail/precision.hpp"

namespace cocktail {

// Where a config value came from, for error messages: "configs/default.toml:12" or "--set".
struct SourceLocation {
  std::string file;
  int line = 0;

  std::string to_string() const;
};

// One TOML table of settings (for example [planner.cocktail]) handed to the component that
// owns it. The component reads each key with a typed getter that validates it; `finish()` then
// reports any key nobody read. Every error is a ConfigError naming file, line, key and what is
// allowed.
class Options {
 public:
  using Value = std::variant<bool, std::int64_t, double, std::string, std::vector<std::string>>;

  Options() = default;
  // `name` is the table's dotted name ("planner.cocktail"); `table_location` is where it starts.
  Options(std::string name, SourceLocation table_location);

  void set(const std::string& key, Value value, SourceLocation where);
  bool contains(const std::string& key) const;
  const std::string& name() const { return name_; }

  bool get_bool(const std::string& key, bool fallback);
  std::int64_t get_int(const std::string& key, std::int64_t fallback, std::int64_t min,
                       std::int64_t max);
  // Integers are accepted where a float is asked for.
  double get_double(const std::string& key, double fallback, double min, double max);
  std::string get_string(const std::string& key, const std::string& fallback);
  // A string that must be one of `allowed`.
  std::string get_choice(const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& allowed);
  // A precision name: fp16, int8, nf4, int4 or int2.
  Precision get_precision(const std::string& key, Precision fallback);
  std::vector<std::string> get_strings(const std::string& key,
                                       const std::vector<std::string>& fallback);
  // Something picked by position or by name: a non-negative integer or a non-empty string,
  // returned as written ("1", "NVIDIA H100"); `fallback` when absent.
  std::string get_index_or_name(const std::string& key, const std::string& fallback);

  // Throws ConfigError for the first key that no getter read.
  void finish() const;

  // An error about `key`, located at its line (or at the table when the key is absent).
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  // An error about the table as a whole, located at its header.
  [[noreturn]] void fail_table(const std::string& what) const;

 private:
  struct Entry {
    Value value;
    SourceLocation where;
  };
  const Entry* find(const std::string& key);

  std::string name_;
  SourceLocation table_location_;
  std::map<std::string, Entry> entries_;
  std::set<std::string> read_;
};

}  // namespace cocktail
