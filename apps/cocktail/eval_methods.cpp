#include "eval_methods.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

#include "cocktail/error.hpp"

namespace cocktail::cli {
namespace {

std::vector<std::string> uniform(const std::string& precision, const std::string& key_axis) {
  return {"engine.planner=uniform", "planner.uniform.precision=" + precision,
          "quant.key_axis=" + key_axis, "quant.value_axis=token"};
}

// Appended to any method: its INT4/INT2 groups fit scale and zero by least squares.
constexpr std::string_view kLeastSquaresSuffix = "+ls";

// KIVI's own setting: its newest 128 tokens stay FP16 (the residual), counted in the plan.
std::vector<std::string> kivi_with_window(const std::string& precision) {
  std::vector<std::string> overrides = uniform(precision, "channel");
  overrides.push_back("planner.uniform.recent_tokens=128");
  return overrides;
}

const std::map<std::string, std::vector<std::string>>& fixed_methods() {
  static const std::map<std::string, std::vector<std::string>> methods = {
      {"fp16", uniform("fp16", "token")},        {"int8", uniform("int8", "token")},
      {"int4", uniform("int4", "token")},        {"int2", uniform("int2", "token")},
      {"nf4", uniform("nf4", "token")},          {"kivi-int4", uniform("int4", "channel")},
      {"kivi-int2", uniform("int2", "channel")}, {"kivi-int2-w128", kivi_with_window("int2")},
      {"recency", {"engine.planner=recency"}},
  };
  return methods;
}

[[noreturn]] void unknown(const std::string& name) {
  std::string known;
  for (const auto& [n, overrides] : fixed_methods()) known += n + ", ";
  throw Error(
      fmt::format("unknown evaluation method '{}'; known: {}cocktail[@scorer], "
                  "budget-<bits>[@scorer], each optionally followed by {} (least-squares ranges)",
                  name, known, kLeastSquaresSuffix));
}

// A planner method with an optional @scorer; nullopt when the name is none.
std::optional<EvalMethod> planner_method(const std::string& name) {
  const std::size_t at = name.find('@');
  const std::string planner = name.substr(0, at);
  EvalMethod method{name, {}};
  if (planner == "cocktail") {
    method.overrides.push_back("engine.planner=cocktail");
  } else if (planner.starts_with("budget-")) {
    const std::string bits = planner.substr(7);
    char* end = nullptr;
    const double value = std::strtod(bits.c_str(), &end);
    if (bits.empty() || *end != '\0' || value <= 0.0 || value > 16.0) return std::nullopt;
    method.overrides.push_back("engine.planner=budget");
    method.overrides.push_back("planner.budget.target_bits=" + bits);
  } else {
    return std::nullopt;
  }
  if (at != std::string::npos) {
    if (at + 1 == name.size()) return std::nullopt;
    method.overrides.push_back("engine.scorer=" + name.substr(at + 1));
  }
  return method;
}

EvalMethod parse_method(const std::string& written) {
  const bool least_squares = written.ends_with(kLeastSquaresSuffix);
  const std::string name =
      least_squares ? written.substr(0, written.size() - kLeastSquaresSuffix.size()) : written;
  const auto fixed = fixed_methods().find(name);
  std::optional<EvalMethod> method =
      fixed != fixed_methods().end() ? EvalMethod{name, fixed->second} : planner_method(name);
  if (!method) unknown(written);
  method->name = written;
  if (least_squares) method->overrides.push_back("quant.range=least_squares");
  return *method;
}

}  // namespace

std::vector<EvalMethod> parse_eval_methods(const std::string& list) {
  std::vector<EvalMethod> methods;
  std::stringstream stream(list);
  std::string name;
  while (std::getline(stream, name, ',')) {
    if (name.empty()) continue;
    for (const EvalMethod& m : methods) {
      if (m.name == name) throw Error(fmt::format("evaluation method '{}' is listed twice", name));
    }
    methods.push_back(parse_method(name));
  }
  if (methods.empty()) throw Error("no evaluation method given");
  return methods;
}

}  // namespace cocktail::cli
