#include "cocktail/models/model_cache.hpp"

#include <cstdlib>

namespace cocktail::models {

std::filesystem::path model_cache_dir() {
  if (const char* dir = std::getenv("COCKTAIL_MODEL_DIR"); dir && *dir) return dir;
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : ".") / ".cache" / "cocktail" / "models";
}

}  // namespace cocktail::models
