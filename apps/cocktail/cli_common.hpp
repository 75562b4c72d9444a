#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cocktail/config.hpp"
#include "cocktail/kv_store.hpp"
#include "cocktail/plan.hpp"

namespace cocktail::models {
struct AnswerStats;
}

namespace cocktail::cli {

// The built-in sample document (sample_context.txt) and a question it answers (4471).
extern const char* const kSampleContext;
inline constexpr const char* kSampleQuery = "What is the code for the strongroom's inner door?";

// --config FILE and --set section.key=value, shared by the commands that take a config.
struct ConfigArgs {
  std::string file;
  std::vector<std::string> overrides;

  void add_to(CLI::App& command, bool required);
  Config load() const;  // defaults when no file was given
};

// --context-file F | --context TEXT, shared by the commands that read a document; without
// either, the built-in sample.
struct ContextArgs {
  std::string file;
  std::string text;

  void add_to(CLI::App& command);
  bool given() const { return !file.empty() || !text.empty(); }
  std::string load() const;  // the document's text
};

// Reads a whole file; throws Error naming the path.
std::string read_text_file(const std::string& path);

// The chunk table of a plan as JSON (NaN scores become null).
nlohmann::json plan_chunks_json(const Plan& plan);

// An answer's stats as JSON (`cocktail run` and `cocktail bench decode`), with the mean time a
// generated token spent in each part of the step under "tpot_parts_s".
nlohmann::json answer_stats_json(const models::AnswerStats& stats);

// Writes JSON to stdout, pretty-printed.
void print_json(const nlohmann::json& j);

// "12.3 MiB"
std::string human_bytes(std::size_t bytes);

}  // namespace cocktail::cli
