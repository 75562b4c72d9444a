#include "memory_check.hpp"

#include <fmt/format.h>

#include <fstream>
#include <string>

#include "cli_common.hpp"
#include "cocktail/error.hpp"
#include "cocktail/models/question_answering.hpp"

namespace cocktail::cli {

std::size_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  const std::string key = "MemAvailable:";
  for (std::string line; std::getline(meminfo, line);) {
    if (line.starts_with(key)) return std::stoull(line.substr(key.size())) * 1024;  // in kB
  }
  throw Error(
      "cannot read MemAvailable from /proc/meminfo, so the memory a run needs cannot be "
      "checked");
}

void require_memory(std::size_t bytes, std::string_view what) {
  const std::size_t available = available_memory_bytes();
  if (bytes <= available) return;
  throw Error(fmt::format("{} needs {} bytes ({}), this machine has {} available", what, bytes,
                          human_bytes(bytes), human_bytes(available)));
}

void require_kv_cache_memory(const models::LlamaModel& model, const models::Question& question,
                             int caches) {
  const std::int64_t tokens =
      models::build_prompt(model, question).tokens() + question.max_new_tokens;
  require_memory(
      std::size_t(caches) * model.hparams().kv_shape().fp16_bytes(tokens),
      fmt::format("{} FP16 KV cache(s) of {} tokens (prompt and answer)", caches, tokens));
}

}  // namespace cocktail::cli
