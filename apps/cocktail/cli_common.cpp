#include "cli_common.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cocktail/error.hpp"
#include "cocktail/eval/progress.hpp"
#include "cocktail/models/question_answering.hpp"

namespace cocktail::cli {

namespace {

// The bytes a UTF-8 sequence with this lead byte may have second: narrower than 80..BF after
// the leads that could otherwise spell an overlong form, a surrogate or a code point above
// U+10FFFF.
std::pair<unsigned char, unsigned char> second_byte_range(unsigned char lead) {
  switch (lead) {
    case 0xE0:
      return {0xA0, 0xBF};
    case 0xED:
      return {0x80, 0x9F};
    case 0xF0:
      return {0x90, 0xBF};
    case 0xF4:
      return {0x80, 0x8F};
    default:
      return {0x80, 0xBF};
  }
}

std::size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead < 0xE0) return 2;
  if (lead >= 0xE0 && lead < 0xF0) return 3;
  if (lead >= 0xF0 && lead < 0xF5) return 4;
  return 0;  // a continuation byte, or a lead that only starts invalid sequences
}

// Where the first byte that is not part of a valid UTF-8 sequence sits, or npos.
std::size_t invalid_utf8_at(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = utf8_sequence_length(lead);
    if (length == 0) return i;
    auto [low, high] = second_byte_range(lead);
    for (std::size_t k = 1; k < length; ++k, low = 0x80, high = 0xBF) {
      if (i + k >= text.size()) return i;
      const auto next = static_cast<unsigned char>(text[i + k]);
      if (next < low || next > high) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

}  // namespace

std::string read_text_file(const std::string& path) {
  // A folder opens as a stream and reads as nothing, which would pass for an empty file.
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw Error("cannot read " + path + ": it is a directory, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void SimdArgs::add_to(CLI::App& command) {
  command
      .add_option("--simd", target,
                  "SIMD target of the CPU backend's kernels, by Highway's name (AVX3_DL, AVX3, "
                  "AVX2, SSE4, EMU128, NEON, ...); `cocktail backends` names this CPU's")
      ->type_name("TARGET");
}

void SimdArgs::apply(ConfigArgs& config) const {
  if (!target.empty()) config.overrides.push_back("backend.cpu.simd=" + target);
}

void SimdArgs::check_backend(const Backend& backend) const {
  if (!target.empty() && backend.name() != "cpu") {
    throw Error(
        fmt::format("--simd {} picks the CPU backend's SIMD target; this run uses the {} "
                    "backend",
                    target, backend.name()));
  }
}

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
  if (file) return read_context_file(*file);
  if (!text) return kSampleContext;
  check_text(*text, "--context");
  return *text;
}

std::string question_or_sample(const std::optional<std::string>& question,
                               const ContextArgs& context, std::string_view option) {
  if (question) {
    check_text(*question, option);
    return *question;
  }
  if (context.given()) throw Error(fmt::format("{} is required with your own context", option));
  return kSampleQuery;
}

void check_text(std::string_view text, std::string_view where) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw Error(fmt::format("{} is empty", where));
  }
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    throw Error(fmt::format("{} holds a NUL byte at byte {}; it must be text", where, nul));
  }
  if (const std::size_t bad = invalid_utf8_at(text); bad != std::string_view::npos) {
    throw Error(fmt::format("{} is not valid UTF-8 at byte {}", where, bad));
  }
}

std::string read_context_file(const std::string& path) {
  std::string text = read_text_file(path);
  check_text(text, "--context-file " + path);
  return text;
}

nlohmann::json operating_point_json(const OperatingPoint& point) {
  nlohmann::json chunks = nlohmann::json::object();
  nlohmann::json shares = nlohmann::json::object();
  for (const auto& [precision, n] : point.chunks) chunks[std::string(to_string(precision))] = n;
  for (const auto& [precision, share] : point.token_share) {
    shares[std::string(to_string(precision))] = share;
  }
  return {{"context_tokens", point.context_tokens},
          {"chunks_per_precision", chunks},
          {"token_share", shares},
          {"avg_code_bits", point.avg_code_bits()},
          {"avg_bits", point.avg_bits()},
          {"kv_bytes", point.kv_bytes},
          {"fp16_kv_bytes", point.fp16_kv_bytes},
          {"kv_bytes_ratio", point.kv_bytes_ratio()}};
}

void print_operating_point(std::ostream& out, const OperatingPoint& point) {
  out << "context tokens by precision:";
  for (const auto& [precision, share] : point.token_share) {
    out << fmt::format(" {} {:.1f}%", to_string(precision), 100.0 * share);
  }
  out << " (chunks:";
  for (const auto& [precision, n] : point.chunks) {
    out << fmt::format(" {}={}", to_string(precision), n);
  }
  out << fmt::format(
      ")\naverage bits per element: {:.2f} with scales and zeros (codes alone {:.2f})\n"
      "KV bytes: {} vs FP16 {} ({:.1f}%)\n",
      point.avg_bits(), point.avg_code_bits(), human_bytes(point.kv_bytes),
      human_bytes(point.fp16_kv_bytes), 100.0 * point.kv_bytes_ratio());
}

nlohmann::json answer_stats_json(const models::AnswerStats& s) {
  const models::DecodeTimes& t = s.decode;
  nlohmann::json stats = {
      {"prompt_tokens", s.prompt_tokens},
      {"context_tokens", s.context_tokens},
      {"context_truncated", s.context_truncated},
      {"generated_tokens", s.generated_tokens},
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
  stats.update(operating_point_json(s.cache));
  return stats;
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

std::function<void(std::int64_t, std::int64_t)> prefill_progress_on_stderr() {
  // The total is known once prefill starts; the callback is copied, so it shares the line.
  auto progress = std::make_shared<std::optional<eval::Progress>>();
  return [progress](std::int64_t done, std::int64_t total) {
    if (!*progress) progress->emplace(eval::Progress::on_stderr("prefill", total, "tokens"));
    (*progress)->update(done);
    if (done == total) (*progress)->finish();
  };
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
