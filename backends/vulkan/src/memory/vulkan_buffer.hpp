#pragma once

#include <volk.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cocktail/buffer.hpp"
#include "cocktail/tensor.hpp"
#include "memory/allocator.hpp"
#include "runtime/device.hpp"

namespace cocktail::vulkan {

// The Vulkan backend's device memory: a range of one of its device's memory blocks, given back
// when the buffer goes.
class VulkanBuffer final : public Buffer {
 public:
  // Throws Error naming the size and the device when the device cannot hold it.
  VulkanBuffer(std::shared_ptr<const Device> device, std::size_t bytes);
  ~VulkanBuffer() override;
  VulkanBuffer(const VulkanBuffer&) = delete;
  VulkanBuffer& operator=(const VulkanBuffer&) = delete;

  std::size_t size() const override { return size_; }
  const Device& device() const { return *device_; }
  const Allocation& allocation() const { return allocation_; }

 private:
  std::shared_ptr<const Device> device_;
  std::size_t size_;
  Allocation allocation_;
};

// Bytes [offset, offset + size) of a VkBuffer, as copies and descriptors address them.
struct BufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
};

// The bytes of `t`. An Error naming `op` and `operand` when the view's buffer is not a buffer
// of `device` (another backend's, another device's, or none), runs past its end, or does not
// start on a whole element.
BufferRange tensor_bytes(const char* op, const char* operand, const Tensor& t,
                         const Device& device);

// A tensor as a kernel reads it: the range its descriptor binds, which starts where the
// device's minStorageBufferOffsetAlignment allows, at or before the tensor, and the index of
// the tensor's first element in it (a push constant of the kernel).
struct KernelOperand {
  BufferRange binding;
  std::uint32_t first = 0;
};

// `t` as a kernel operand: tensor_bytes' checks, and an Error naming `op` and `operand` when
// the range a binding would cover exceeds the device's maxStorageBufferRange.
KernelOperand kernel_operand(const char* op, const char* operand, const Tensor& t,
                             const Device& device);

}  // namespace cocktail::vulkan
