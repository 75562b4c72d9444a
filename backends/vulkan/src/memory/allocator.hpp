#pragma once

#include <volk.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/handles.hpp"

namespace cocktail::vulkan {

// Which memory an Allocator hands out: device-local for tensors and weights, or host-visible
// and coherent (cached where the device offers it) for the copies to and from the host.
enum class MemoryKind { device, staging };

// A range an Allocator handed out: bytes [offset, offset + size) of the VkBuffer that covers
// its block, which copies and descriptors address directly.
struct Allocation {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  std::byte* mapped = nullptr;  // the host address of `offset`, for staging memory
  const void* block = nullptr;  // which block, for release()
};

// Memory of one kind, handed out as ranges of large blocks: a device allows few allocations
// (maxMemoryAllocationCount is 4096 on many drivers), each slow to make, while a model makes
// thousands of buffers. Each block is one VkDeviceMemory with one VkBuffer over all of it. A
// request of more than half a block gets a block of its own; none may exceed the device's
// largest allocation (maxMemoryAllocationSize). Ranges start on `alignment` (at least 256 and
// the device's minStorageBufferOffsetAlignment), so a tensor placed in a range at an offset
// aligned for every device (tensor_allocation.hpp) can be bound where it starts.
// Thread-safe.
class Allocator {
 public:
  struct Limits {
    VkDeviceSize max_allocation = 0;  // maxMemoryAllocationSize
    VkDeviceSize alignment = 0;
    VkDeviceSize block_bytes = 0;
  };
  Allocator(const DeviceDispatch& device, VkPhysicalDevice physical, MemoryKind kind,
            const Limits& limits, std::string device_name);
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // `bytes` bytes (at least one alignment unit). Throws Error naming the size and the device
  // when the device cannot hold them.
  Allocation allocate(VkDeviceSize bytes);
  void release(const Allocation& allocation);

 private:
  struct Block;
  std::unique_ptr<Block> make_block(VkDeviceSize bytes, bool dedicated, VkDeviceSize wanted);
  std::uint32_t memory_type(std::uint32_t allowed) const;

  const DeviceDispatch& device_;
  VkPhysicalDeviceMemoryProperties memory_{};
  MemoryKind kind_;
  Limits limits_;
  std::string device_name_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Block>> blocks_;
};

}  // namespace cocktail::vulkan
