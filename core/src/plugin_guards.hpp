#pragma once

// Host-side wrappers around every object a plugin creates. Each call into plugin code goes
// through `call_plugin`, which turns whatever the plugin throws into an error made here, in
// the core library: the exception object a plugin throws has its type information (and maybe
// its storage) in the plugin's library, which may be unloaded by the time a host catches it.
// The planner and scorer wrappers also serialise their calls, so the sessions of one engine can
// share them across threads whatever the plugin's own state.

#include <memory>
#include <string>

#include "cocktail/backend_provider.hpp"
#include "cocktail/chunk_planner.hpp"
#include "cocktail/chunk_scorer.hpp"

namespace cocktail {

// Who a plugin is in error messages: "scorer 'minilm' (cocktail-scorer-minilm.so)".
struct PluginLabel {
  std::string text;
};

std::shared_ptr<BackendProvider> guard_backend_provider(std::shared_ptr<BackendProvider> provider,
                                                        PluginLabel label);
std::shared_ptr<ChunkPlanner> guard_planner(std::shared_ptr<ChunkPlanner> planner,
                                            PluginLabel label);
std::shared_ptr<ChunkScorer> guard_scorer(std::shared_ptr<ChunkScorer> scorer, PluginLabel label);

}  // namespace cocktail
