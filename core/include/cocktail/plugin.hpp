#pragma once

// What a plugin author includes: the entry point is one macro.
//
//   class MyPlanner : public cocktail::ChunkPlanner { ... explicit MyPlanner(cocktail::Options&);
//   }; COCKTAIL_PLANNER_PLUGIN("my-planner", "1.0.0", "what it does", MyPlanner)
//
// The class's constructor takes the plugin's config table (`cocktail::Options&`), reads its
// keys with the typed getters and may throw; the macro turns exceptions into an error status
// (so construction never throws across the C entry), and calls `finish()` so unknown keys are
// reported. Methods of the created object are C++ virtual calls: they report errors by
// throwing cocktail::Error, which the host catches like its own.

#include <cstdio>
#include <exception>
#include <memory>

#include "cocktail/backend_provider.hpp"
#include "cocktail/chunk_planner.hpp"
#include "cocktail/chunk_scorer.hpp"
#include "cocktail/error.hpp"
#include "cocktail/options.hpp"
#include "cocktail/plugin_abi.h"
#include "cocktail/version.hpp"

#if defined(_WIN32)
#define COCKTAIL_PLUGIN_EXPORT extern "C" __declspec(dllexport)
#else
#define COCKTAIL_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
#endif

namespace cocktail::plugin_detail {

template <class Interface, class Impl>
int create(void* options, void** out, char* error, std::size_t error_size) noexcept {
  try {
    Options empty;
    Options& opts = options ? *static_cast<Options*>(options) : empty;
    auto object = std::make_unique<Impl>(opts);
    opts.finish();
    // Ownership passes to the host, which hands it back to destroy().
    *out = static_cast<Interface*>(object.release());
    return 0;
  } catch (const ConfigError& e) {
    std::snprintf(error, error_size, "%s", e.what());
    return COCKTAIL_CREATE_BAD_CONFIG;
  } catch (const std::exception& e) {
    std::snprintf(error, error_size, "%s", e.what());
  } catch (...) {
    std::snprintf(error, error_size, "unknown exception");
  }
  return COCKTAIL_CREATE_FAILED;
}

template <class Interface>
void destroy(void* object) noexcept {
  std::unique_ptr<Interface> owned(static_cast<Interface*>(object));
}

}  // namespace cocktail::plugin_detail

#define COCKTAIL_DEFINE_PLUGIN_(KIND, INTERFACE, NAME, VERSION, DESCRIPTION, IMPL)       \
  COCKTAIL_PLUGIN_EXPORT const cocktail_plugin_descriptor* cocktail_plugin_entry(void) { \
    static const cocktail_plugin_descriptor descriptor = {                               \
        cocktail::kAbiMajor,                                                             \
        cocktail::kAbiMinor,                                                             \
        sizeof(cocktail_plugin_descriptor),                                              \
        KIND,                                                                            \
        NAME,                                                                            \
        VERSION,                                                                         \
        DESCRIPTION,                                                                     \
        &cocktail::plugin_detail::create<INTERFACE, IMPL>,                               \
        &cocktail::plugin_detail::destroy<INTERFACE>};                                   \
    return &descriptor;                                                                  \
  }

#define COCKTAIL_BACKEND_PLUGIN(NAME, VERSION, DESCRIPTION, IMPL)                            \
  COCKTAIL_DEFINE_PLUGIN_(COCKTAIL_PLUGIN_BACKEND, cocktail::BackendProvider, NAME, VERSION, \
                          DESCRIPTION, IMPL)
#define COCKTAIL_PLANNER_PLUGIN(NAME, VERSION, DESCRIPTION, IMPL)                         \
  COCKTAIL_DEFINE_PLUGIN_(COCKTAIL_PLUGIN_PLANNER, cocktail::ChunkPlanner, NAME, VERSION, \
                          DESCRIPTION, IMPL)
#define COCKTAIL_SCORER_PLUGIN(NAME, VERSION, DESCRIPTION, IMPL)                        \
  COCKTAIL_DEFINE_PLUGIN_(COCKTAIL_PLUGIN_SCORER, cocktail::ChunkScorer, NAME, VERSION, \
                          DESCRIPTION, IMPL)
