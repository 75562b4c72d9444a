// A descriptor that claims to end before its factory functions, as one built against a
// truncated header would: the host must refuse it by its struct_size and never call through
// the missing fields.
#include <cstddef>

#include "cocktail/plugin.hpp"

COCKTAIL_PLUGIN_EXPORT const cocktail_plugin_descriptor* cocktail_plugin_entry(void) {
  static const cocktail_plugin_descriptor descriptor = {
      cocktail::kAbiMajor,
      cocktail::kAbiMinor,
      offsetof(cocktail_plugin_descriptor, create),
      COCKTAIL_PLUGIN_PLANNER,
      "test-small-descriptor",
      "0.0.1",
      "test planner: its descriptor is too small",
      nullptr,
      nullptr};
  return &descriptor;
}
