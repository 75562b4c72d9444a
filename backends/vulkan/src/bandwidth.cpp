#include "bandwidth.hpp"

#include <algorithm>

#include "compute/kernels.hpp"
#include "memory/vulkan_buffer.hpp"
#include "memory/vulkan_stream.hpp"

namespace cocktail::vulkan {

namespace {

constexpr int kRuns = 3;
constexpr VkDeviceSize kWordBytes = 16;  // the kernel reads uvec4

}  // namespace

double measure_read_bandwidth(const std::shared_ptr<const Device>& device, std::size_t bytes) {
  const VkDeviceSize words = std::max<VkDeviceSize>(bytes / kWordBytes, 1);
  const VulkanBuffer data(device, words * kWordBytes);
  const VulkanBuffer sink(device, sizeof(std::uint32_t));
  const Allocation& memory = data.allocation();
  const BufferRange sink_range{sink.allocation().buffer, sink.allocation().offset, 4};
  // One binding covers at most maxStorageBufferRange: larger buffers are read in pieces, each
  // starting on the storage-offset alignment.
  const VkDeviceSize unit = std::max(device->limits().storage_offset_alignment, kWordBytes);
  const VkDeviceSize piece = device->limits().max_storage_range / unit * unit;

  VulkanStream stream(device);
  stream.zero({memory.buffer, memory.offset, words * kWordBytes});
  const std::shared_ptr<Event> start = stream.make_event();
  const std::shared_ptr<Event> end = stream.make_event();
  double best = 0.0;
  for (int run = 0; run < kRuns; ++run) {
    stream.record(*start);
    for (VkDeviceSize at = 0; at < words * kWordBytes; at += piece) {
      const VkDeviceSize size = std::min(piece, words * kWordBytes - at);
      const ReadBandwidthPush push{std::uint32_t(size / kWordBytes), 0, 1};  // zeros never give 1
      const BufferRange buffers[] = {{memory.buffer, memory.offset + at, size}, sink_range};
      const std::uint32_t groups = std::uint32_t(std::clamp<VkDeviceSize>(
          (size / kWordBytes + kWorkgroup - 1) / kWorkgroup, 1, device->limits().max_groups));
      stream.dispatch(kReadBandwidth, buffers, std::as_bytes(std::span(&push, 1)), {groups, 1});
    }
    stream.record(*end);
    stream.synchronize();
    const double seconds = stream.seconds_between(*start, *end);
    if (seconds > 0.0) best = std::max(best, double(words * kWordBytes) / seconds);
  }
  return best;
}

}  // namespace cocktail::vulkan
