#pragma once

#include <cstdint>
#include <filesystem>

#include "cocktail/options.hpp"

namespace cocktail::models {

// The [model] table of a config (docs/config.md).
struct ModelSettings {
  // The GGUF file. A bare file name is looked up in the model cache folder:
  // $COCKTAIL_MODEL_DIR, else ~/.cache/cocktail/models (where scripts/fetch-models puts it).
  std::filesystem::path path = "SmolLM2-135M-Instruct.Q4_1.gguf";
  int prefill_block = 256;    // tokens per prefill step: bounds activation memory
  double temperature = 0.0;   // 0 = greedy decoding
  double top_p = 1.0;         // nucleus sampling mass, when temperature > 0
  std::uint64_t seed = 1234;  // sampling seed

  // Reads and validates the table; throws ConfigError naming the key.
  static ModelSettings from_options(Options options);
  // The file `path` names, resolved as above. Throws Error when it does not exist, saying how
  // to fetch the default model.
  std::filesystem::path resolved_path() const;
};

}  // namespace cocktail::models
