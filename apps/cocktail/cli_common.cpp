#include "cli_common.hpp"

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cocktail/error.hpp"
#include "cocktail/models/question_answering.hpp"

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

nlohmann::json answer_stats_json(const models::AnswerStats& s) {
  nlohmann::json chunks = nlohmann::json::object();
  for (const auto& [precision, n] : s.chunks_per_precision)
    chunks[std::string(to_string(precision))] = n;
  const models::DecodeTimes& t = s.decode;
  return {{"prompt_tokens", s.prompt_tokens},
          {"context_tokens", s.context_tokens},
          {"context_truncated", s.context_truncated},
          {"generated_tokens", s.generated_tokens},
          {"chunks_per_precision", chunks},
          {"avg_bits", s.avg_bits},
          {"kv_bytes", s.kv_bytes},
          {"fp16_kv_bytes", s.fp16_kv_bytes},
          {"prefill_s", s.prefill_s},
          {"prefill_tokens_per_s", s.prefill_s > 0 ? double(s.prompt_tokens) / s.prefill_s : 0.0},
          {"plan_s", s.plan_s},
          {"tpot_s", s.tpot_s()},
          {"tpot_parts_s",
           {{"matmul", t.per_step(t.matmul_s)},
            {"attention", t.per_step(t.attention_s)},
            {"logits", t.per_step(t.logits_s)},
            {"other", t.per_step(t.other_s)}}},
          {"peak_rss_bytes", s.peak_rss_bytes}};
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
