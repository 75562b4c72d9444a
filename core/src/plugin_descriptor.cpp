#include "plugin_descriptor.hpp"

#include <cstddef>

#include "cocktail/version.hpp"

namespace cocktail {

std::string descriptor_problem(const cocktail_plugin_descriptor* d) {
  if (!d) return "its entry returned no descriptor";
  if (d->abi_major != kAbiMajor) {
    return "built for plugin ABI " + std::to_string(d->abi_major) + "." +
           std::to_string(d->abi_minor) + ", this host speaks ABI " + std::to_string(kAbiMajor) +
           "." + std::to_string(kAbiMinor) + "; rebuild the plugin against this Cocktail";
  }
  const std::size_t needed = offsetof(cocktail_plugin_descriptor, destroy) + sizeof(d->destroy);
  if (d->struct_size < needed) {
    return "descriptor is " + std::to_string(d->struct_size) + " bytes, at least " +
           std::to_string(needed) + " expected";
  }
  if (d->kind < COCKTAIL_PLUGIN_BACKEND || d->kind > COCKTAIL_PLUGIN_SCORER) {
    return "unknown plugin kind " + std::to_string(d->kind);
  }
  if (!d->name || !*d->name) return "descriptor has no name";
  if (!d->create || !d->destroy) return "descriptor lacks its create or destroy function";
  return {};
}

}  // namespace cocktail
