#include "cocktail/models/model_settings.hpp"

#include <fmt/format.h>

#include "cocktail/error.hpp"
#include "cocktail/models/model_cache.hpp"

namespace cocktail::models {
ModelSettings ModelSettings::from_options(Options options) {
  ModelSettings s;
  const std::string path = options.get_string("path", s.path.string());
  if (path.empty()) options.fail("path", "= \"\" is empty; allowed: a GGUF file");
  s.path = path;
  s.prefill_block = int(options.get_int("prefill_block", s.prefill_block, 1, 8192));
  s.temperature = options.get_double("temperature", s.temperature, 0.0, 100.0);
  s.top_p = options.get_double("top_p", s.top_p, 0.0, 1.0);
  if (s.top_p <= 0.0) options.fail("top_p", "= 0 keeps no token; allowed: greater than 0, up to 1");
  s.seed = std::uint64_t(options.get_int("seed", std::int64_t(s.seed), 0, INT64_MAX));
  options.finish();
  return s;
}

std::filesystem::path ModelSettings::resolved_path() const {
  const std::filesystem::path file = path.has_parent_path() ? path : model_cache_dir() / path;
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(file, error);
  if (status.type() == std::filesystem::file_type::not_found) {
    throw Error(
        fmt::format("model file {} not found; run scripts/fetch-models to download the "
                    "default model, or set [model] path",
                    file.string()));
  }
  if (error) throw Error(fmt::format("model file {}: {}", file.string(), error.message()));
  if (status.type() == std::filesystem::file_type::directory) {
    throw Error(
        fmt::format("model file {} is a directory; [model] path names a GGUF file", file.string()));
  }
  if (status.type() != std::filesystem::file_type::regular) {
    throw Error(
        fmt::format("model file {} is not a regular file (a FIFO, socket or device); "
                    "[model] path names a GGUF file",
                    file.string()));
  }
  return file;
}

}  // namespace cocktail::models
