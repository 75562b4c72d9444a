#include "runtime/loader.hpp"

#include <dlfcn.h>
#include <volk.h>

#include <cstdlib>
#include <string>

#include "cocktail/error.hpp"

namespace cocktail::vulkan {

namespace {

// Why the loader could not be opened; empty once volk points at it.
std::string load() {
  const char* named = std::getenv("COCKTAIL_VULKAN_LOADER");
  const std::string file = named != nullptr && *named != '\0' ? named : "libvulkan.so.1";
  void* library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return "no Vulkan loader: cannot open " + file + " (" + (why ? why : "unknown reason") +
           "); install one (Debian: libvulkan1) or name it in COCKTAIL_VULKAN_LOADER";
  }
  auto* get_instance_proc_addr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library, "vkGetInstanceProcAddr"));
  if (get_instance_proc_addr == nullptr) {
    dlclose(library);
    return file + " has no vkGetInstanceProcAddr, so it is not a Vulkan loader";
  }
  volkInitializeCustom(get_instance_proc_addr);
  return {};
}

}  // namespace

void open_loader() {
  static const std::string failure = load();
  if (!failure.empty()) throw Error("vulkan backend: " + failure);
}

}  // namespace cocktail::vulkan
