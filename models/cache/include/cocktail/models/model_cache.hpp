#pragma once

#include <filesystem>

namespace cocktail::models {

// The model cache folder: $COCKTAIL_MODEL_DIR, else ~/.cache/cocktail/models (where
// scripts/fetch-models puts the models).
std::filesystem::path model_cache_dir();

}  // namespace cocktail::models
