#include "cocktail/plugin.hpp"
#include "vulkan_backend.hpp"

COCKTAIL_BACKEND_PLUGIN(
    "vulkan", "0.1.0", "Vulkan backend (GLSL compute shaders; any GPU vendor, lavapipe on the CPU)",
    cocktail::vulkan::VulkanBackendProvider)
