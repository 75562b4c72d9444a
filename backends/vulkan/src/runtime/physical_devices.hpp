#pragma once

#include <volk.h>

#include <cstdint>
#include <vector>

#include "cocktail/device.hpp"

namespace cocktail::vulkan {

// A device the instance sees, as BackendProvider::devices() lists it, and the queue family the
// backend would run on.
struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  DeviceInfo info;
  std::uint32_t queue_family = 0;
};

// Every device of the instance, in the loader's order, scored for `backend = "auto"`: a device
// can run with Vulkan 1.1, a queue family that computes, and subgroup arithmetic and ballots in
// compute shaders.
std::vector<PhysicalDevice> physical_devices(VkInstance instance);

}  // namespace cocktail::vulkan
