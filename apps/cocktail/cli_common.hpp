#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/backend.hpp"
#include "cocktail/config.hpp"
#include "cocktail/kv_store.hpp"
#include "cocktail/operating_point.hpp"
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

// --simd TARGET of the benchmarks: the CPU backend's SIMD target ([backend.cpu] simd), so that
// targets can be compared on one machine.
struct SimdArgs {
  std::string target;  // empty: the config's

  void add_to(CLI::App& command);
  // Adds the override to `config`.
  void apply(ConfigArgs& config) const;
  // Refuses --simd for a run whose backend is not the CPU's.
  void check_backend(const Backend& backend) const;
};

// --context-file F | --context TEXT, shared by the commands that read a document; without
// either, the built-in sample. Given but empty is an error, not the sample.
struct ContextArgs {
  std::optional<std::string> file;
  std::optional<std::string> text;

  void add_to(CLI::App& command);
  bool given() const { return file || text; }
  std::string load() const;  // the document's text, checked by check_text
};

// The question given as `option` (--question, --query), checked by check_text; without one,
// the sample's question, which only fits the sample document.
std::string question_or_sample(const std::optional<std::string>& question,
                               const ContextArgs& context, std::string_view option);

// Throws Error naming `where` when `text` is blank, holds a NUL byte or is not valid UTF-8.
void check_text(std::string_view text, std::string_view where);

// The whole file; a folder or an unreadable file is an error naming it.
std::string read_text_file(const std::string& path);
// A document from --context-file: the whole file, checked by check_text; throws Error naming
// the path.
std::string read_context_file(const std::string& path);

// The chunk table of a plan as JSON (NaN scores become null).
nlohmann::json plan_chunks_json(const Plan& plan);

// An operating point as flat JSON keys: chunks_per_precision, token_share, avg_code_bits,
// avg_bits, kv_bytes, fp16_kv_bytes, kv_bytes_ratio.
nlohmann::json operating_point_json(const OperatingPoint& point);

// An operating point for people: the token shares per precision, the bits per element and the
// KV bytes against FP16, three lines.
void print_operating_point(std::ostream& out, const OperatingPoint& point);

// An answer's stats as JSON (`cocktail run` and `cocktail bench decode`), with the mean time a
// generated token spent in each part of the step under "tpot_parts_s".
nlohmann::json answer_stats_json(const models::AnswerStats& stats);

// A prefill progress callback: a progress line on stderr (eval::Progress::on_stderr).
std::function<void(std::int64_t done, std::int64_t total)> prefill_progress_on_stderr();

// Writes JSON to stdout, pretty-printed.
void print_json(const nlohmann::json& j);

// "12.3 MiB"
std::string human_bytes(std::size_t bytes);

}  // namespace cocktail::cli
