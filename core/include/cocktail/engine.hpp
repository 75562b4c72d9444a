#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cocktail/backend.hpp"
#include "cocktail/chunk_planner.hpp"
#include "cocktail/chunk_scorer.hpp"
#include "cocktail/config.hpp"
#include "cocktail/plugin_registry.hpp"
#include "cocktail/session.hpp"

namespace cocktail {

// The configured set of plugins: one backend, one planner, one scorer. Cheap to keep around;
// make one Session per sequence.
class Engine {
 public:
  // Loads plugins (config plugin_paths included), picks the backend and its device
  // (choose_backend), creates planner and scorer from their config tables, and validates every
  // plugin table in the config. Throws ConfigError / PluginError / Error.
  explicit Engine(const Config& config);

  const std::shared_ptr<Backend>& backend() const { return backend_; }
  ChunkPlanner& planner() const { return *planner_; }
  ChunkScorer& scorer() const { return *scorer_; }
  const PluginRegistry& registry() const { return registry_; }
  const EngineSettings& settings() const { return settings_; }

  Session new_session(const KvShape& shape, std::int64_t max_tokens = 0) const;
  // A session on a copy of `prefilled`'s cache (made by the same backend), to be planned and
  // decoded with this engine's planner and scorer: an evaluation prefills once and tries each
  // method on its own copy.
  Session session_from(const Session& prefilled) const;

 private:
  EngineSettings settings_;
  PluginRegistry registry_;
  std::shared_ptr<Backend> backend_;
  std::shared_ptr<ChunkPlanner> planner_;
  std::shared_ptr<ChunkScorer> scorer_;
};

// The backend the config names (engine.backend; `auto`: the available one with the highest
// score) on the device it names (engine.device; by default the first that can run). Throws
// PluginError listing every backend and why it cannot run when none can, and Error listing the
// devices when the one named is not there or cannot run.
std::shared_ptr<Backend> choose_backend(const PluginRegistry& registry, const Config& config);

}  // namespace cocktail
