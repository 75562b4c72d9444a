#pragma once

#include <volk.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "cocktail/device.hpp"
#include "memory/allocator.hpp"
#include "runtime/handles.hpp"
#include "runtime/instance.hpp"
#include "runtime/physical_devices.hpp"
#include "runtime/pipeline.hpp"

namespace cocktail::vulkan {

// What the backend reads of a device's limits.
struct DeviceLimits {
  VkDeviceSize max_storage_range = 0;         // maxStorageBufferRange: bytes one binding covers
  VkDeviceSize storage_offset_alignment = 0;  // minStorageBufferOffsetAlignment
  VkDeviceSize max_allocation = 0;            // maxMemoryAllocationSize
  std::uint32_t max_groups = 0;               // maxComputeWorkGroupCount, the least of x and y
  std::uint32_t subgroup_size = 0;            // as reported; a kernel may see another size
  double timestamp_period_ns = 0.0;           // nanoseconds a timestamp tick
  std::uint32_t timestamp_bits = 0;           // valid bits of the queue's timestamps; 0: none
};

// One physical device opened for the backend: a logical device with one compute queue, its
// memory (Allocators) and its pipelines, made at first use of each kernel. Everything made
// on it (buffers, streams, weights) holds it, so it goes last; no work is left on its queue
// then, since a stream waits for all it submits.
class Device {
 public:
  // With `push_descriptors` false, kernels bind through descriptor pools even where the
  // device has VK_KHR_push_descriptor. Throws Error when the device cannot be opened.
  Device(std::shared_ptr<Instance> instance, const PhysicalDevice& physical, bool push_descriptors);
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceDispatch& dispatch() const { return owned_.dispatch; }
  const VolkDeviceTable& vk() const { return owned_.dispatch.vk; }
  VkDevice handle() const { return owned_.dispatch.device; }
  const DeviceInfo& info() const { return info_; }
  const std::string& name() const { return info_.name; }
  const DeviceLimits& limits() const { return limits_; }
  std::uint32_t queue_family() const { return queue_family_; }
  bool push_descriptors() const { return push_descriptors_; }
  Instance& instance() const { return *instance_; }
  Allocator& memory(MemoryKind kind) const {
    return kind == MemoryKind::device ? *device_memory_ : *staging_memory_;
  }

  // Submits one command buffer to the queue, which signals `fence` when it is done. Several
  // streams submit from their threads: the queue is used by one at a time.
  void submit(VkCommandBuffer commands, VkFence fence) const;
  // The pipeline of `kernel`, made at its first use.
  const Pipeline& pipeline(const Kernel& kernel) const;

 private:
  // The VkDevice, destroyed after every member below it.
  struct Owned {
    DeviceDispatch dispatch;
    Owned() = default;
    Owned(const Owned&) = delete;
    Owned& operator=(const Owned&) = delete;
    ~Owned();
  };

  std::shared_ptr<Instance> instance_;
  DeviceInfo info_;
  DeviceLimits limits_;
  std::uint32_t queue_family_;
  bool push_descriptors_ = false;
  Owned owned_;
  VkQueue queue_ = VK_NULL_HANDLE;
  UniquePipelineCache pipeline_cache_;
  std::unique_ptr<Allocator> device_memory_;
  std::unique_ptr<Allocator> staging_memory_;
  mutable std::mutex queue_mutex_;
  mutable std::mutex pipelines_mutex_;
  mutable std::map<const Kernel*, std::unique_ptr<Pipeline>> pipelines_;
};

}  // namespace cocktail::vulkan
