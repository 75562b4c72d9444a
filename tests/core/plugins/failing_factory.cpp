// A hand-written descriptor whose factory reports failure through the C waist (status 1 and a
// message), as a plugin written in C would.
#include <cstddef>
#include <cstdio>

#include "cocktail/plugin.hpp"

namespace {

int create_nothing(void*, void** out, char* error, std::size_t error_size) {
  *out = nullptr;
  std::snprintf(error, error_size, "%s", "test-failing: the license server is unreachable");
  return 1;
}

// Required by the descriptor; never called, since create_nothing() makes no object.
void destroy_nothing(void*) {}

}  // namespace

COCKTAIL_PLUGIN_EXPORT const cocktail_plugin_descriptor* cocktail_plugin_entry(void) {
  static const cocktail_plugin_descriptor descriptor = {cocktail::kAbiMajor,
                                                        cocktail::kAbiMinor,
                                                        sizeof(cocktail_plugin_descriptor),
                                                        COCKTAIL_PLUGIN_PLANNER,
                                                        "test-failing",
                                                        "0.0.1",
                                                        "test planner: its factory fails",
                                                        &create_nothing,
                                                        &destroy_nothing};
  return &descriptor;
}
