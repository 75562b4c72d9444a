#include "memory/allocator.hpp"

#include <algorithm>
#include <optional>

#include "cocktail/error.hpp"
#include "runtime/vk_check.hpp"

namespace cocktail::vulkan {

namespace {

VkDeviceSize round_up(VkDeviceSize n, VkDeviceSize to) {
  return (n + to - 1) / to * to;
}

std::string kind_name(MemoryKind kind) {
  return kind == MemoryKind::device ? "device memory" : "host-visible staging memory";
}

}  // namespace

struct Allocator::Block {
  UniqueMemory memory;
  UniqueBuffer buffer;
  VkDeviceSize size = 0;
  std::byte* mapped = nullptr;
  bool dedicated = false;
  std::map<VkDeviceSize, VkDeviceSize> free;  // offset -> bytes of each free range

  bool unused() const { return free.size() == 1 && free.begin()->second == size; }
};

Allocator::Allocator(const DeviceDispatch& device, VkPhysicalDevice physical, MemoryKind kind,
                     const Limits& limits, std::string device_name)
    : device_(device), kind_(kind), limits_(limits), device_name_(std::move(device_name)) {
  vkGetPhysicalDeviceMemoryProperties(physical, &memory_);
}

Allocator::~Allocator() = default;

std::uint32_t Allocator::memory_type(std::uint32_t allowed) const {
  const VkMemoryPropertyFlags required =
      kind_ == MemoryKind::device
          ? 0
          : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  // Device-local for the device's memory; cached for staging, since downloads read it back.
  const VkMemoryPropertyFlags preferred = kind_ == MemoryKind::device
                                              ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
                                              : VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  std::optional<std::uint32_t> fallback;
  for (std::uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = memory_.memoryTypes[i].propertyFlags;
    if ((allowed & (1u << i)) == 0 || (flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (!fallback) fallback = i;
  }
  if (!fallback) {
    throw Error("vulkan backend: " + device_name_ + " has no memory type for " + kind_name(kind_) +
                " buffers");
  }
  return *fallback;
}

std::unique_ptr<Allocator::Block> Allocator::make_block(VkDeviceSize bytes, bool dedicated,
                                                        VkDeviceSize wanted) {
  auto block = std::make_unique<Block>();
  block->size = bytes;
  block->dedicated = dedicated;
  VkBufferCreateInfo buffer_info{};
  buffer_info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  buffer_info.size = bytes;
  buffer_info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                      VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  buffer_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  check(device_.vk.vkCreateBuffer(device_.device, &buffer_info, nullptr, &buffer),
        "vkCreateBuffer of " + std::to_string(bytes) + " bytes");
  block->buffer = UniqueBuffer(device_, buffer);

  VkMemoryRequirements needs{};
  device_.vk.vkGetBufferMemoryRequirements(device_.device, buffer, &needs);
  VkMemoryAllocateInfo memory_info{};
  memory_info.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  memory_info.allocationSize = needs.size;
  memory_info.memoryTypeIndex = memory_type(needs.memoryTypeBits);
  VkDeviceMemory memory = VK_NULL_HANDLE;
  const VkResult allocated =
      device_.vk.vkAllocateMemory(device_.device, &memory_info, nullptr, &memory);
  if (allocated == VK_ERROR_OUT_OF_DEVICE_MEMORY || allocated == VK_ERROR_OUT_OF_HOST_MEMORY) {
    throw Error("vulkan backend: out of " + kind_name(kind_) + " on " + device_name_ +
                " allocating " + std::to_string(needs.size) + " bytes for a buffer of " +
                std::to_string(wanted) + " bytes");
  }
  check(allocated, "vkAllocateMemory of " + std::to_string(needs.size) + " bytes");
  block->memory = UniqueMemory(device_, memory);
  check(device_.vk.vkBindBufferMemory(device_.device, buffer, memory, 0), "vkBindBufferMemory");
  if (kind_ == MemoryKind::staging) {
    void* host = nullptr;
    check(device_.vk.vkMapMemory(device_.device, memory, 0, VK_WHOLE_SIZE, 0, &host),
          "vkMapMemory");
    block->mapped = static_cast<std::byte*>(host);
  }
  block->free.emplace(0, bytes);
  return block;
}

Allocation Allocator::allocate(VkDeviceSize bytes) {
  const VkDeviceSize size = round_up(std::max<VkDeviceSize>(bytes, 1), limits_.alignment);
  if (size > limits_.max_allocation) {
    throw Error("vulkan backend: a buffer of " + std::to_string(bytes) + " bytes is more than " +
                device_name_ + " allocates at once (maxMemoryAllocationSize, " +
                std::to_string(limits_.max_allocation) + " bytes)");
  }
  const std::lock_guard lock(mutex_);
  Block* chosen = nullptr;
  VkDeviceSize offset = 0;
  if (size > limits_.block_bytes / 2) {
    blocks_.push_back(make_block(size, true, bytes));
    chosen = blocks_.back().get();
  } else {
    for (const std::unique_ptr<Block>& block : blocks_) {
      if (block->dedicated) continue;
      const auto fit = std::find_if(block->free.begin(), block->free.end(),
                                    [&](const auto& range) { return range.second >= size; });
      if (fit != block->free.end()) {
        chosen = block.get();
        offset = fit->first;
        break;
      }
    }
    if (chosen == nullptr) {
      blocks_.push_back(make_block(limits_.block_bytes, false, bytes));
      chosen = blocks_.back().get();
    }
  }
  const auto range = chosen->free.find(offset);
  const VkDeviceSize left = range->second - size;
  chosen->free.erase(range);
  if (left > 0) chosen->free.emplace(offset + size, left);
  return {chosen->buffer.get(), offset, size,
          chosen->mapped != nullptr ? chosen->mapped + offset : nullptr, chosen};
}

void Allocator::release(const Allocation& allocation) {
  const std::lock_guard lock(mutex_);
  const auto owner = std::find_if(blocks_.begin(), blocks_.end(), [&](const auto& block) {
    return block.get() == allocation.block;
  });
  if (owner == blocks_.end()) return;
  Block& block = **owner;
  // Back into the free list, merged with the free ranges on either side.
  auto inserted = block.free.emplace(allocation.offset, allocation.size).first;
  if (const auto next = std::next(inserted);
      next != block.free.end() && inserted->first + inserted->second == next->first) {
    inserted->second += next->second;
    block.free.erase(next);
  }
  if (inserted != block.free.begin()) {
    const auto previous = std::prev(inserted);
    if (previous->first + previous->second == inserted->first) {
      previous->second += inserted->second;
      block.free.erase(inserted);
    }
  }
  // An unused block goes back to the device, but for one shared block kept for the next
  // requests.
  if (!block.unused()) return;
  const bool another_shared = std::any_of(blocks_.begin(), blocks_.end(), [&](const auto& b) {
    return b.get() != &block && !b->dedicated;
  });
  if (block.dedicated || another_shared) blocks_.erase(owner);
}

}  // namespace cocktail::vulkan
