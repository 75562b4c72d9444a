#include "cocktail/options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "cocktail/error.hpp"

namespace cocktail {

namespace {

std::string quoted(const std::string& s) {
  return fmt::format("{:?}", s);
}

std::string dotted(const std::string& table, const std::string& key) {
  return table.empty() ? key : table + "." + key;
}

std::string format_value(const Options::Value& value) {
  struct Formatter {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return fmt::format("{}", i); }
    // A float keeps its point ("32.0") so that it is not mistaken for an integer.
    std::string operator()(double d) const {
      std::string text = fmt::format("{}", d);
      if (text.find_first_not_of("-0123456789") == std::string::npos) text += ".0";
      return text;
    }
    std::string operator()(const std::string& s) const { return quoted(s); }
    std::string operator()(const std::vector<std::string>& v) const {
      std::vector<std::string> items;
      for (const std::string& s : v) items.push_back(quoted(s));
      return fmt::format("[{}]", fmt::join(items, ", "));
    }
  };
  return std::visit(Formatter{}, value);
}

// "file:line: key" for a line in a file, "--set key" for a command-line override.
std::string locate(const SourceLocation& where, const std::string& full_key) {
  if (where.file.empty()) return full_key;
  if (where.line == 0) return where.file + " " + full_key;
  return where.to_string() + ": " + full_key;
}

// Entries read from files come first in line order; command-line ones (line 0) after them.
bool earlier(const SourceLocation& a, const SourceLocation& b) {
  if ((a.line == 0) != (b.line == 0)) return b.line == 0;
  return a.line < b.line;
}

}  // namespace

std::string SourceLocation::to_string() const {
  return line == 0 ? file : fmt::format("{}:{}", file, line);
}

Options::Options(std::string name, SourceLocation table_location)
    : name_(std::move(name)), table_location_(std::move(table_location)) {}

void Options::set(const std::string& key, Value value, SourceLocation where) {
  entries_.insert_or_assign(key, Entry{std::move(value), std::move(where)});
}

bool Options::contains(const std::string& key) const {
  return entries_.contains(key);
}

const Options::Entry* Options::find(const std::string& key) {
  read_.insert(key);
  const auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

void Options::fail(const std::string& key, const std::string& what) const {
  const auto it = entries_.find(key);
  const SourceLocation& where = it == entries_.end() ? table_location_ : it->second.where;
  throw ConfigError(locate(where, dotted(name_, key)) + " " + what);
}

void Options::fail_table(const std::string& what) const {
  throw ConfigError(locate(table_location_, "[" + name_ + "]") + " " + what);
}

Precision Options::get_precision(const std::string& key, Precision fallback) {
  std::vector<std::string> allowed;
  for (Precision p : kAllPrecisions) allowed.emplace_back(to_string(p));
  // get_choice() has already rejected any name parse_precision() would not know.
  return *parse_precision(get_choice(key, std::string(to_string(fallback)), allowed));
}

bool Options::get_bool(const std::string& key, bool fallback) {
  const Entry* entry = find(key);
  if (!entry) return fallback;
  if (const bool* b = std::get_if<bool>(&entry->value)) return *b;
  fail(key,
       fmt::format("= {} has the wrong type; allowed: true or false", format_value(entry->value)));
}

std::int64_t Options::get_int(const std::string& key, std::int64_t fallback, std::int64_t min,
                              std::int64_t max) {
  const Entry* entry = find(key);
  if (!entry) return fallback;
  const std::int64_t* i = std::get_if<std::int64_t>(&entry->value);
  if (!i) {
    fail(key, fmt::format("= {} has the wrong type; allowed: an integer from {} to {}",
                          format_value(entry->value), min, max));
  }
  if (*i < min || *i > max) {
    fail(key, fmt::format("= {} is out of range; allowed: {} to {}", *i, min, max));
  }
  return *i;
}

double Options::get_double(const std::string& key, double fallback, double min, double max) {
  const Entry* entry = find(key);
  if (!entry) return fallback;
  double d = 0.0;
  if (const double* p = std::get_if<double>(&entry->value)) {
    d = *p;
  } else if (const std::int64_t* i = std::get_if<std::int64_t>(&entry->value)) {
    d = static_cast<double>(*i);
  } else {
    fail(key, fmt::format("= {} has the wrong type; allowed: a number from {} to {}",
                          format_value(entry->value), min, max));
  }
  // Written so that NaN is out of range too.
  if (!(d >= min && d <= max)) {
    fail(key, fmt::format("= {} is out of range; allowed: {} to {}", format_value(entry->value),
                          min, max));
  }
  return d;
}

std::string Options::get_string(const std::string& key, const std::string& fallback) {
  const Entry* entry = find(key);
  if (!entry) return fallback;
  if (const std::string* s = std::get_if<std::string>(&entry->value)) return *s;
  fail(key, fmt::format("= {} has the wrong type; allowed: a string", format_value(entry->value)));
}

std::string Options::get_index_or_name(const std::string& key, const std::string& fallback) {
  const Entry* entry = find(key);
  if (!entry) return fallback;
  const auto* index = std::get_if<std::int64_t>(&entry->value);
  const auto* name = std::get_if<std::string>(&entry->value);
  if ((index && *index >= 0) || (name && !name->empty())) {
    return index ? std::to_string(*index) : *name;
  }
  fail(key, fmt::format("= {} is not allowed; allowed: an index from 0 or a name",
                        format_value(entry->value)));
}

std::string Options::get_choice(const std::string& key, const std::string& fallback,
                                const std::vector<std::string>& allowed) {
  const Entry* entry = find(key);
  if (!entry) return fallback;
  const std::string* s = std::get_if<std::string>(&entry->value);
  if (!s || std::find(allowed.begin(), allowed.end(), *s) == allowed.end()) {
    fail(key, fmt::format("= {} is not allowed; allowed: {}", format_value(entry->value),
                          fmt::join(allowed, ", ")));
  }
  return *s;
}

std::vector<std::string> Options::get_strings(const std::string& key,
                                              const std::vector<std::string>& fallback) {
  const Entry* entry = find(key);
  if (!entry) return fallback;
  if (const auto* v = std::get_if<std::vector<std::string>>(&entry->value)) return *v;
  fail(key, fmt::format("= {} has the wrong type; allowed: an array of strings",
                        format_value(entry->value)));
}

void Options::finish() const {
  const std::pair<const std::string, Entry>* unread = nullptr;
  for (const auto& entry : entries_) {
    if (read_.contains(entry.first)) continue;
    if (!unread || earlier(entry.second.where, unread->second.where)) unread = &entry;
  }
  if (!unread) return;
  const std::string known = read_.empty() ? "none" : fmt::format("{}", fmt::join(read_, ", "));
  const std::string full_key = dotted(name_, unread->first);
  const SourceLocation& where = unread->second.where;
  // A file names its line first; an override names itself as the user typed it.
  const std::string head = where.line > 0 ? where.to_string() + ": unknown key " + full_key
                                          : locate(where, full_key) + ": unknown key";
  const std::string table = name_.empty() ? "" : " in [" + name_ + "]";
  throw ConfigError(fmt::format("{}{}; known keys: {}", head, table, known));
}

}  // namespace cocktail
