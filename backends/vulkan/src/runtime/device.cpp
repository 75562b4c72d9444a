#include "runtime/device.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/vk_check.hpp"

namespace cocktail::vulkan {

namespace {

// Device memory in blocks of 64 MiB, staging memory in blocks of 16 MiB (a block is one
// VkDeviceMemory; larger requests get one each).
constexpr VkDeviceSize kDeviceBlockBytes = VkDeviceSize(64) << 20;
constexpr VkDeviceSize kStagingBlockBytes = VkDeviceSize(16) << 20;
// Ranges start on this or the device's storage-offset alignment, if larger: the alignment
// tensor_allocation.hpp gives tensors inside a buffer.
constexpr VkDeviceSize kRangeAlignment = 256;

bool has_extension(VkPhysicalDevice device, const char* name) {
  std::uint32_t count = 0;
  check(vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr),
        "vkEnumerateDeviceExtensionProperties");
  std::vector<VkExtensionProperties> extensions(count);
  check(vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data()),
        "vkEnumerateDeviceExtensionProperties");
  return std::any_of(extensions.begin(), extensions.end(), [&](const VkExtensionProperties& e) {
    return std::strcmp(e.extensionName, name) == 0;
  });
}

DeviceLimits read_limits(VkPhysicalDevice device, std::uint32_t queue_family) {
  VkPhysicalDeviceSubgroupProperties subgroup{};
  subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  VkPhysicalDeviceMaintenance3Properties maintenance3{};
  maintenance3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
  maintenance3.pNext = &subgroup;
  VkPhysicalDeviceProperties2 properties{};
  properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  properties.pNext = &maintenance3;
  vkGetPhysicalDeviceProperties2(device, &properties);
  const VkPhysicalDeviceLimits& limits = properties.properties.limits;

  std::uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());

  DeviceLimits out;
  out.max_storage_range = limits.maxStorageBufferRange;
  out.storage_offset_alignment = limits.minStorageBufferOffsetAlignment;
  out.max_allocation = maintenance3.maxMemoryAllocationSize;
  out.max_groups = std::min(limits.maxComputeWorkGroupCount[0], limits.maxComputeWorkGroupCount[1]);
  out.subgroup_size = std::max(subgroup.subgroupSize, 1u);
  out.timestamp_period_ns = limits.timestampPeriod;
  out.timestamp_bits = families[queue_family].timestampValidBits;
  return out;
}

}  // namespace

Device::Owned::~Owned() {
  if (dispatch.device != VK_NULL_HANDLE) dispatch.vk.vkDestroyDevice(dispatch.device, nullptr);
}

Device::Device(std::shared_ptr<Instance> instance, const PhysicalDevice& physical,
               bool push_descriptors)
    : instance_(std::move(instance)),
      info_(physical.info),
      limits_(read_limits(physical.handle, physical.queue_family)),
      queue_family_(physical.queue_family),
      push_descriptors_(push_descriptors &&
                        has_extension(physical.handle, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME)) {
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{};
  queue_info.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue_info.queueFamilyIndex = queue_family_;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  const char* extensions[] = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
  VkDeviceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = push_descriptors_ ? 1 : 0;
  info.ppEnabledExtensionNames = extensions;
  check(vkCreateDevice(physical.handle, &info, nullptr, &owned_.dispatch.device),
        "vkCreateDevice on " + info_.name);
  volkLoadDeviceTable(&owned_.dispatch.vk, owned_.dispatch.device);
  vk().vkGetDeviceQueue(handle(), queue_family_, 0, &queue_);

  VkPipelineCacheCreateInfo cache_info{};
  cache_info.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
  VkPipelineCache cache = VK_NULL_HANDLE;
  check(vk().vkCreatePipelineCache(handle(), &cache_info, nullptr, &cache),
        "vkCreatePipelineCache");
  pipeline_cache_ = UniquePipelineCache(dispatch(), cache);

  const VkDeviceSize alignment = std::max(kRangeAlignment, limits_.storage_offset_alignment);
  device_memory_ = std::make_unique<Allocator>(
      dispatch(), physical.handle, MemoryKind::device,
      Allocator::Limits{limits_.max_allocation, alignment,
                        std::min(kDeviceBlockBytes, limits_.max_allocation)},
      info_.name);
  staging_memory_ = std::make_unique<Allocator>(
      dispatch(), physical.handle, MemoryKind::staging,
      Allocator::Limits{limits_.max_allocation, alignment,
                        std::min(kStagingBlockBytes, limits_.max_allocation)},
      info_.name);
  instance_->expect_valid("opening " + info_.name);
}

void Device::submit(VkCommandBuffer commands, VkFence fence) const {
  VkSubmitInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  info.commandBufferCount = 1;
  info.pCommandBuffers = &commands;
  const std::lock_guard lock(queue_mutex_);
  check(vk().vkQueueSubmit(queue_, 1, &info, fence), "vkQueueSubmit on " + info_.name);
}

const Pipeline& Device::pipeline(const Kernel& kernel) const {
  const std::lock_guard lock(pipelines_mutex_);
  std::unique_ptr<Pipeline>& made = pipelines_[&kernel];
  if (!made) {
    made = std::make_unique<Pipeline>(dispatch(), pipeline_cache_.get(), kernel, push_descriptors_);
  }
  return *made;
}

}  // namespace cocktail::vulkan
