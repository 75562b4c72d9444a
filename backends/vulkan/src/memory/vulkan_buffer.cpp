#include "memory/vulkan_buffer.hpp"

#include <algorithm>
#include <string>

#include "cocktail/error.hpp"

namespace cocktail::vulkan {

VulkanBuffer::VulkanBuffer(std::shared_ptr<const Device> device, std::size_t bytes)
    : device_(std::move(device)),
      size_(bytes),
      allocation_(device_->memory(MemoryKind::device).allocate(bytes)) {}

VulkanBuffer::~VulkanBuffer() {
  device_->memory(MemoryKind::device).release(allocation_);
}

BufferRange tensor_bytes(const char* op, const char* operand, const Tensor& t,
                         const Device& device) {
  const auto* buffer = dynamic_cast<const VulkanBuffer*>(t.buffer);
  if (buffer == nullptr || &buffer->device() != &device) {
    throw Error(std::string(op) + ": " + operand + " (" + describe(t) + ") is " +
                (t.buffer == nullptr ? "an empty view"
                 : buffer == nullptr ? "in another backend's memory"
                                     : "in the memory of another Vulkan device") +
                "; the Vulkan backend on " + device.name() + " reads only its own buffers");
  }
  expect_inside_buffer(op, operand, t, buffer->size());
  const Allocation& memory = buffer->allocation();
  return {memory.buffer, memory.offset + t.offset, t.bytes()};
}

KernelOperand kernel_operand(const char* op, const char* operand, const Tensor& t,
                             const Device& device) {
  const BufferRange bytes = tensor_bytes(op, operand, t, device);
  const VkDeviceSize alignment = device.limits().storage_offset_alignment;
  const VkDeviceSize start = bytes.offset / alignment * alignment;
  // Whole 32-bit words, at least one: buffer ranges are allocated in 256-byte units, so the
  // rounding stays inside the tensor's allocation.
  const VkDeviceSize covered =
      std::max<VkDeviceSize>((bytes.offset + bytes.size - start + 3) / 4 * 4, 4);
  if (covered > device.limits().max_storage_range) {
    throw Error(std::string(op) + ": " + operand + " (" + describe(t) + ") spans " +
                std::to_string(covered) + " bytes, more than one storage binding of " +
                device.name() + " covers (maxStorageBufferRange, " +
                std::to_string(device.limits().max_storage_range) + " bytes)");
  }
  return {{bytes.buffer, start, covered},
          std::uint32_t((bytes.offset - start) / element_bytes(t.type))};
}

}  // namespace cocktail::vulkan
