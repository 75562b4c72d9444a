#pragma once

#include <volk.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cocktail/stream.hpp"
#include "memory/allocator.hpp"
#include "memory/vulkan_buffer.hpp"
#include "runtime/device.hpp"
#include "runtime/handles.hpp"
#include "runtime/pipeline.hpp"

namespace cocktail::vulkan {

// How many batches of a stream (the work between two synchronize calls) are done; events
// hold it to know whether the batch that recorded them is, from any thread.
struct BatchClock {
  std::atomic<std::uint64_t> done = 0;
};

// The Vulkan backend's stream: its work is recorded into one command buffer and submitted,
// and waited for, at synchronize(). Every command waits for the ones before it (a full memory
// barrier between commands), as the Stream interface orders them. Uploads are copied into
// host-visible staging memory when enqueued; downloads land in staging memory and reach the
// host span at synchronize().
class VulkanStream final : public Stream {
 public:
  explicit VulkanStream(std::shared_ptr<const Device> device);
  ~VulkanStream() override;
  VulkanStream(const VulkanStream&) = delete;
  VulkanStream& operator=(const VulkanStream&) = delete;

  void upload(std::span<const std::byte> host, const Tensor& dst) override;
  void download(const Tensor& src, std::span<std::byte> host) override;
  void copy(const Tensor& src, const Tensor& dst) override;
  void synchronize() override;
  std::shared_ptr<Event> make_event() override;
  void record(Event& event) override;
  double seconds_between(const Event& start, const Event& end) const override;

  const Device& device() const { return *device_; }
  // Enqueues `kernel` over `groups` workgroups (x, y), with `buffers` at its bindings 0, 1, ...
  // and `push` as its push constants.
  void dispatch(const Kernel& kernel, std::span<const BufferRange> buffers,
                std::span<const std::byte> push, std::array<std::uint32_t, 2> groups);
  // The index report, for a kernel that reads indices from device memory and reports the
  // first one out of range there: { failed, position, value, limit } as 32-bit words. At
  // synchronize() a report turns into the Error "<what> <value> at position <position> is
  // outside [0, <limit>)".
  BufferRange index_report(std::string what);
  // Enqueues a fill of `range` with zero bytes.
  void zero(const BufferRange& range);

 private:
  struct Download {
    const std::byte* staged;
    std::span<std::byte> host;
  };
  struct Staged {
    BufferRange range;
    std::byte* host;
  };

  // The command buffer, begun if it was not, and a barrier after the commands already in it
  // (or, for the first, in earlier submissions).
  VkCommandBuffer next_command();
  VkCommandBuffer command_buffer();
  // `bytes` bytes of staging memory, kept until the end of the batch.
  Staged stage(VkDeviceSize bytes);
  void bind(const Pipeline& pipeline, std::span<const BufferRange> buffers);
  VkDescriptorSet allocate_set(const Pipeline& pipeline);
  void submit_and_wait();
  void end_batch();
  void expect_no_index_error();

  std::shared_ptr<const Device> device_;
  UniqueCommandPool pool_;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  UniqueFence fence_;
  bool recording_ = false;
  std::vector<Download> downloads_;
  std::vector<Allocation> staging_;  // this batch's; the first is kept for the next
  VkDeviceSize staging_used_ = 0;    // bytes of the last one
  std::vector<UniqueDescriptorPool> descriptor_pools_;  // without push descriptors
  std::size_t descriptor_pool_ = 0;                     // the one sets come from now
  Allocation report_;
  std::string report_what_;
  std::shared_ptr<BatchClock> clock_ = std::make_shared<BatchClock>();
};

// The VulkanStream behind `stream`; an Error naming `op` when it is another backend's or
// another device's.
VulkanStream& vulkan_stream(const char* op, Stream& stream, const Device& device);

}  // namespace cocktail::vulkan
