#include "cocktail/eval/case_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "cocktail/error.hpp"
#include "cocktail/eval/metrics.hpp"
#include "text_file.hpp"

namespace cocktail::eval {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::set<std::string> kCaseKeys = {"context", "context_file", "expected",
                                         "id",      "kind",         "question"};
const std::set<std::string> kNeedleKeys = {"answer", "question", "statement"};

// A bad value is shown in errors up to this many characters and this many levels deep: the
// line may hold a huge value or one nested without end.
constexpr std::size_t kShownChars = 60;
constexpr int kShownDepth = 3;
// Deeper than any case needs (an object holding an array of strings); parsing stops there.
constexpr int kMaxDepth = 16;

std::string json_text(const json& scalar) {
  return scalar.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string cut(const std::string& text) {
  return text.size() > kShownChars ? text.substr(0, kShownChars) : text;
}

// Appends `value` as compact JSON until `out` is longer than kShownChars, with containers
// below kShownDepth levels as [...] or {...}.
void append_shown(std::string& out, const json& value, int depth) {
  if (!value.is_structured()) {
    out += json_text(value.is_string() ? json(cut(value.get_ref<const std::string&>())) : value);
    return;
  }
  const bool is_array = value.is_array();
  if (depth == kShownDepth) {
    out += is_array ? "[...]" : "{...}";
    return;
  }
  out += is_array ? '[' : '{';
  bool first = true;
  for (const auto& item : value.items()) {
    if (out.size() > kShownChars) break;
    if (!first) out += ',';
    first = false;
    if (!is_array) out += json_text(json(cut(item.key()))) + ':';
    append_shown(out, item.value(), depth + 1);
  }
  out += is_array ? ']' : '}';
}

std::string shown(const json& value) {
  std::string out;
  append_shown(out, value, 0);
  if (out.size() > kShownChars) out = out.substr(0, kShownChars - 3) + "...";
  return out;
}

// One line of the file, for errors that name file, line and key.
struct Line {
  const std::string& source;
  int number = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}:{}: {}", source, number, what));
  }
  // "cases.jsonl:3: expected = 5 has the wrong type; allowed: ..."
  [[noreturn]] void fail(const std::string& key, const json& value, const std::string& what) const {
    fail(fmt::format("{} = {} {}", key, shown(value), what));
  }
};

std::string non_empty_string(const json& object, const std::string& key, const Line& line) {
  const auto it = object.find(key);
  if (it == object.end()) line.fail(fmt::format("{} is missing; allowed: a non-empty string", key));
  if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
    line.fail(key, *it, "is not allowed; allowed: a non-empty string");
  }
  return it->get<std::string>();
}

std::vector<std::string> expected_answers(const json& object, const Line& line) {
  const auto it = object.find("expected");
  constexpr const char* kAllowed = "allowed: a non-empty string or array of non-empty strings";
  if (it == object.end()) line.fail(fmt::format("expected is missing; {}", kAllowed));
  if (it->is_string() && !it->get_ref<const std::string&>().empty()) {
    return {it->get<std::string>()};
  }
  if (!it->is_array() || it->empty())
    line.fail("expected", *it, fmt::format("is not {}", kAllowed));
  std::vector<std::string> answers;
  for (const json& answer : *it) {
    if (!answer.is_string() || answer.get_ref<const std::string&>().empty()) {
      line.fail("expected", *it, fmt::format("has an element {}; {}", shown(answer), kAllowed));
    }
    answers.push_back(answer.get<std::string>());
  }
  return answers;
}

std::string context_of(const json& object, const Line& line, const fs::path& base_dir) {
  const bool inline_text = object.contains("context");
  const bool from_file = object.contains("context_file");
  if (inline_text == from_file) {
    line.fail(fmt::format("{}; allowed: exactly one of context, context_file",
                          inline_text ? "has both context and context_file"
                                      : "has neither context nor context_file"));
  }
  if (inline_text) {
    const json& text = object.at("context");
    if (!text.is_string()) line.fail("context", text, "has the wrong type; allowed: a string");
    return text.get<std::string>();
  }
  const std::string relative = non_empty_string(object, "context_file", line);
  try {
    return read_text_file(base_dir / relative, "the context file");
  } catch (const Error& e) {
    line.fail(fmt::format("context_file = \"{}\": {}", relative, e.what()));
  }
}

CaseKind kind_of(const json& object, const Line& line) {
  const auto it = object.find("kind");
  if (it == object.end()) return CaseKind::custom;
  std::optional<CaseKind> kind;
  if (it->is_string()) kind = parse_case_kind(it->get_ref<const std::string&>());
  if (!kind) {
    line.fail("kind", *it,
              fmt::format("is not allowed; allowed: {}, custom", generated_kind_names()));
  }
  return *kind;
}

json parse_json(const std::string& text, const Line& line) {
  const json::parser_callback_t limit_depth = [&](int depth, json::parse_event_t event, json&) {
    const bool opens =
        event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (opens && depth >= kMaxDepth) {
      line.fail(
          fmt::format("nests arrays and objects more than {} deep; allowed: one object of "
                      "strings and arrays of strings",
                      kMaxDepth));
    }
    return true;
  };
  try {
    return json::parse(text, limit_depth);
  } catch (const json::exception& e) {
    // Not only syntax: a number too large for a double is an out_of_range error.
    line.fail(fmt::format("is not valid JSON: {}", e.what()));
  }
}

// One line's JSON object, every key one of `keys`.
json parse_object(const std::string& text, const Line& line, const std::set<std::string>& keys) {
  json object = parse_json(text, line);
  if (!object.is_object()) line.fail("is not a JSON object; allowed: one object per line");
  for (const auto& item : object.items()) {
    if (!keys.contains(item.key())) {
      line.fail(fmt::format("unknown key {}; known keys: {}", item.key(), fmt::join(keys, ", ")));
    }
  }
  return object;
}

// Calls `read(object, line)` for the object on each line of `text` that is not blank.
template <class Read>
void for_each_object(std::string_view text, const std::string& source,
                     const std::set<std::string>& keys, Read read) {
  Line line{source, 0};
  while (!text.empty()) {
    ++line.number;
    const std::size_t end = text.find('\n');
    std::string row(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!row.empty() && row.back() == '\r') row.pop_back();
    if (row.find_first_not_of(" \t") == std::string::npos) continue;
    read(parse_object(row, line, keys), line);
  }
}

EvalCase parse_case(const json& object, const Line& line, const fs::path& base_dir) {
  EvalCase c;
  c.id = non_empty_string(object, "id", line);
  c.kind = kind_of(object, line);
  c.question = non_empty_string(object, "question", line);
  c.expected = expected_answers(object, line);
  c.context = context_of(object, line, base_dir);
  return c;
}

WrittenNeedle parse_needle(const json& object, const Line& line) {
  WrittenNeedle needle{non_empty_string(object, "statement", line),
                       non_empty_string(object, "question", line),
                       non_empty_string(object, "answer", line), line.number};
  if (contains_score(needle.statement, {needle.answer}, AnswerMatch::any) == 0.0) {
    line.fail("statement", object.at("statement"),
              fmt::format("does not hold the answer \"{}\"; allowed: a statement that does",
                          needle.answer));
  }
  if (contains_score(needle.question, {needle.answer}, AnswerMatch::any) > 0.0) {
    line.fail(
        "question", object.at("question"),
        fmt::format("gives the answer \"{}\" away; allowed: a question without it", needle.answer));
  }
  return needle;
}

}  // namespace

std::vector<EvalCase> parse_cases_jsonl(std::string_view text, const std::string& source,
                                        const fs::path& base_dir) {
  std::vector<EvalCase> cases;
  std::map<std::string, int> first_line_of_id;
  for_each_object(text, source, kCaseKeys, [&](const json& object, const Line& line) {
    EvalCase c = parse_case(object, line, base_dir);
    const auto [it, fresh] = first_line_of_id.try_emplace(c.id, line.number);
    if (!fresh) {
      line.fail(fmt::format("id = \"{}\" is used twice (first on line {}); allowed: unique ids",
                            c.id, it->second));
    }
    cases.push_back(std::move(c));
  });
  if (cases.empty()) throw Error(fmt::format("{}: has no cases", source));
  return cases;
}

std::vector<WrittenNeedle> parse_needles_jsonl(std::string_view text, const std::string& source) {
  std::vector<WrittenNeedle> needles;
  for_each_object(text, source, kNeedleKeys, [&](const json& object, const Line& line) {
    needles.push_back(parse_needle(object, line));
  });
  if (needles.empty()) throw Error(fmt::format("{}: has no needles", source));
  return needles;
}

std::vector<EvalCase> load_cases_jsonl(const fs::path& file) {
  return parse_cases_jsonl(read_text_file(file, "the case file"), file.string(),
                           file.parent_path());
}

std::vector<WrittenNeedle> load_needles_jsonl(const fs::path& file) {
  return parse_needles_jsonl(read_text_file(file, "the needle file"), file.string());
}

}  // namespace cocktail::eval
