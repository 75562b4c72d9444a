#include "runtime/physical_devices.hpp"

#include <optional>
#include <string>

#include "runtime/vk_check.hpp"

namespace cocktail::vulkan {

namespace {

// Scores against the CPU backend's 10. A GPU wins over it. A CPU device (lavapipe,
// SwiftShader) runs, but emulates a GPU on the same cores the CPU backend drives directly, with
// kernels that are not made for them, so it scores below it: `auto` takes it only where the CPU
// backend is missing, and `backend = "vulkan"` still picks it.
constexpr int kDiscreteGpuScore = 50;
constexpr int kIntegratedGpuScore = 40;
constexpr int kVirtualGpuScore = 30;
constexpr int kOtherDeviceScore = 20;
constexpr int kCpuDeviceScore = 1;

int score_of(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return kDiscreteGpuScore;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return kIntegratedGpuScore;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return kVirtualGpuScore;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return kCpuDeviceScore;
    default:
      return kOtherDeviceScore;
  }
}

std::string kind_of(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "CPU device: backend=auto prefers the CPU backend";
    default:
      return "device of no listed type";
  }
}

std::string version_text(std::uint32_t version) {
  return std::to_string(VK_API_VERSION_MAJOR(version)) + "." +
         std::to_string(VK_API_VERSION_MINOR(version)) + "." +
         std::to_string(VK_API_VERSION_PATCH(version));
}

// The driver's own name and version ("llvmpipe, Mesa 22.3.6 (LLVM 15.0.6)"), which Vulkan 1.2
// devices report; empty before.
std::string driver_of(VkPhysicalDevice device, std::uint32_t api_version) {
  if (api_version < VK_API_VERSION_1_2) return {};
  VkPhysicalDeviceDriverProperties driver{};
  driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  VkPhysicalDeviceProperties2 properties{};
  properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  properties.pNext = &driver;
  vkGetPhysicalDeviceProperties2(device, &properties);
  return std::string(driver.driverName) + ", " + driver.driverInfo;
}

// A queue family that computes, one that also writes timestamps (events need them) first.
std::optional<std::uint32_t> compute_family(VkPhysicalDevice device) {
  std::uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  std::optional<std::uint32_t> any;
  for (std::uint32_t i = 0; i < count; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) == 0) continue;
    if (families[i].timestampValidBits > 0) return i;
    if (!any) any = i;
  }
  return any;
}

// Whether compute shaders have the subgroup operations the kernels use (subgroup.glsl).
bool has_subgroup_arithmetic(VkPhysicalDevice device) {
  VkPhysicalDeviceSubgroupProperties subgroup{};
  subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  VkPhysicalDeviceProperties2 properties{};
  properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  properties.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(device, &properties);
  const VkSubgroupFeatureFlags needed = VK_SUBGROUP_FEATURE_BASIC_BIT |
                                        VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
                                        VK_SUBGROUP_FEATURE_BALLOT_BIT;
  return (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0 &&
         (subgroup.supportedOperations & needed) == needed;
}

std::size_t device_local_bytes(VkPhysicalDevice device) {
  VkPhysicalDeviceMemoryProperties memory{};
  vkGetPhysicalDeviceMemoryProperties(device, &memory);
  std::size_t bytes = 0;
  for (std::uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
    if ((memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0) {
      bytes += memory.memoryHeaps[i].size;
    }
  }
  return bytes;
}

PhysicalDevice describe(VkPhysicalDevice handle) {
  VkPhysicalDeviceProperties properties{};
  vkGetPhysicalDeviceProperties(handle, &properties);
  PhysicalDevice device{handle, {properties.deviceName, device_local_bytes(handle), {}}, 0};
  const std::string version = "Vulkan " + version_text(properties.apiVersion);
  const std::optional<std::uint32_t> family = compute_family(handle);
  if (properties.apiVersion < VK_API_VERSION_1_1) {
    device.info.availability = {0, version + "; the backend needs Vulkan 1.1"};
  } else if (!family) {
    device.info.availability = {0, version + ", but no queue family computes"};
  } else if (!has_subgroup_arithmetic(handle)) {
    device.info.availability = {
        0, version +
               ", but its compute shaders lack the subgroup arithmetic and ballots the "
               "kernels use"};
  } else {
    const std::string driver = driver_of(handle, properties.apiVersion);
    device.queue_family = *family;
    device.info.availability = {score_of(properties.deviceType),
                                version + (driver.empty() ? "" : " (" + driver + ")") + ", " +
                                    kind_of(properties.deviceType)};
  }
  return device;
}

}  // namespace

std::vector<PhysicalDevice> physical_devices(VkInstance instance) {
  std::uint32_t count = 0;
  check(vkEnumeratePhysicalDevices(instance, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> handles(count);
  check(vkEnumeratePhysicalDevices(instance, &count, handles.data()), "vkEnumeratePhysicalDevices");
  std::vector<PhysicalDevice> devices;
  for (const VkPhysicalDevice handle : handles) devices.push_back(describe(handle));
  return devices;
}

}  // namespace cocktail::vulkan
