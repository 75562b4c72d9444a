// A plugin built for the next major ABI. Past abi_major such a descriptor may be laid out
// differently, so the host must refuse it before reading anything else; the factories are
// left out to make any later read show.
#include "cocktail/plugin.hpp"

COCKTAIL_PLUGIN_EXPORT const cocktail_plugin_descriptor* cocktail_plugin_entry(void) {
  static const cocktail_plugin_descriptor descriptor = {cocktail::kAbiMajor + 1,
                                                        0,
                                                        sizeof(cocktail_plugin_descriptor),
                                                        COCKTAIL_PLUGIN_PLANNER,
                                                        "test-abi-next",
                                                        "0.0.1",
                                                        "test planner: built for the next ABI",
                                                        nullptr,
                                                        nullptr};
  return &descriptor;
}
