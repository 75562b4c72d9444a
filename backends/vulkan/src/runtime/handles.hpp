#pragma once

#include <volk.h>

#include <utility>

namespace cocktail::vulkan {

// A logical device and its functions. Each device loads its own table (volkLoadDeviceTable)
// rather than volk's global pointers, which hold one device at a time: two backends on two
// devices (of two drivers, say) each call their own driver.
struct DeviceDispatch {
  VkDevice device = VK_NULL_HANDLE;
  VolkDeviceTable vk{};
};

// One Vulkan object of a device, destroyed by `Destroy` (a member of VolkDeviceTable such as
// &VolkDeviceTable::vkDestroyBuffer) when it goes. The device must outlive it.
template <class Handle, auto Destroy>
class Unique {
 public:
  Unique() = default;
  Unique(const DeviceDispatch& device, Handle handle) : device_(&device), handle_(handle) {}
  ~Unique() { reset(); }
  Unique(Unique&& other) noexcept
      : device_(other.device_), handle_(std::exchange(other.handle_, VK_NULL_HANDLE)) {}
  Unique& operator=(Unique&& other) noexcept {
    if (this != &other) {
      reset();
      device_ = other.device_;
      handle_ = std::exchange(other.handle_, VK_NULL_HANDLE);
    }
    return *this;
  }
  Unique(const Unique&) = delete;
  Unique& operator=(const Unique&) = delete;

  Handle get() const { return handle_; }

 private:
  void reset() {
    if (handle_ != VK_NULL_HANDLE) (device_->vk.*Destroy)(device_->device, handle_, nullptr);
    handle_ = VK_NULL_HANDLE;
  }

  const DeviceDispatch* device_ = nullptr;
  Handle handle_ = VK_NULL_HANDLE;
};

using UniqueBuffer = Unique<VkBuffer, &VolkDeviceTable::vkDestroyBuffer>;
using UniqueMemory = Unique<VkDeviceMemory, &VolkDeviceTable::vkFreeMemory>;
using UniqueFence = Unique<VkFence, &VolkDeviceTable::vkDestroyFence>;
using UniqueCommandPool = Unique<VkCommandPool, &VolkDeviceTable::vkDestroyCommandPool>;
using UniqueQueryPool = Unique<VkQueryPool, &VolkDeviceTable::vkDestroyQueryPool>;
using UniqueDescriptorPool = Unique<VkDescriptorPool, &VolkDeviceTable::vkDestroyDescriptorPool>;
using UniqueDescriptorSetLayout =
    Unique<VkDescriptorSetLayout, &VolkDeviceTable::vkDestroyDescriptorSetLayout>;
using UniquePipelineLayout = Unique<VkPipelineLayout, &VolkDeviceTable::vkDestroyPipelineLayout>;
using UniquePipeline = Unique<VkPipeline, &VolkDeviceTable::vkDestroyPipeline>;
using UniquePipelineCache = Unique<VkPipelineCache, &VolkDeviceTable::vkDestroyPipelineCache>;
using UniqueShaderModule = Unique<VkShaderModule, &VolkDeviceTable::vkDestroyShaderModule>;

}  // namespace cocktail::vulkan
