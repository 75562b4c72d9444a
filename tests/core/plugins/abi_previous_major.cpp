// A backend plugin built for the previous major ABI, the one before Compute::rope took a
// RopeStyle: its Compute has another vtable, so the host must refuse it from the
// descriptor alone; the factories are left out to make any later read show.
#include "cocktail/plugin.hpp"

COCKTAIL_PLUGIN_EXPORT const cocktail_plugin_descriptor* cocktail_plugin_entry(void) {
  static const cocktail_plugin_descriptor descriptor = {cocktail::kAbiMajor - 1,
                                                        0,
                                                        sizeof(cocktail_plugin_descriptor),
                                                        COCKTAIL_PLUGIN_BACKEND,
                                                        "test-abi-previous",
                                                        "0.0.1",
                                                        "test backend: built for the previous ABI",
                                                        nullptr,
                                                        nullptr};
  return &descriptor;
}
