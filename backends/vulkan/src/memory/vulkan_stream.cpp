#include "memory/vulkan_stream.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "cocktail/error.hpp"
#include "runtime/vk_check.hpp"

namespace cocktail::vulkan {

namespace {

// Staging memory comes in chunks of this size (or the size of one larger copy); the first
// chunk stays with the stream between batches.
constexpr VkDeviceSize kStagingChunkBytes = VkDeviceSize(4) << 20;
constexpr VkDeviceSize kStagingAlignment = 16;
// A descriptor pool (without push descriptors) holds this many sets of up to kPoolBuffers
// storage buffers a set on average.
constexpr std::uint32_t kPoolSets = 256;
constexpr std::uint32_t kPoolBuffers = 8;
constexpr std::uint32_t kReportWords = 4;

// A marker of a point in a stream's queue: a timestamp query, written when the work before it
// is done.
class VulkanEvent final : public Event {
 public:
  explicit VulkanEvent(std::shared_ptr<const Device> device) : device_(std::move(device)) {
    VkQueryPoolCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = 1;
    VkQueryPool pool = VK_NULL_HANDLE;
    check(device_->vk().vkCreateQueryPool(device_->handle(), &info, nullptr, &pool),
          "vkCreateQueryPool");
    pool_ = UniqueQueryPool(device_->dispatch(), pool);
  }

  const Device& device() const { return *device_; }
  VkQueryPool pool() const { return pool_.get(); }
  // Recorded as part of batch `batch` of the stream that `clock` counts.
  void recorded(std::shared_ptr<const BatchClock> clock, std::uint64_t batch) {
    clock_ = std::move(clock);
    batch_ = batch;
  }
  bool reached() const { return clock_ && clock_->done > batch_; }

 private:
  std::shared_ptr<const Device> device_;
  UniqueQueryPool pool_;
  std::shared_ptr<const BatchClock> clock_;
  std::uint64_t batch_ = 0;
};

template <class E>
auto& vulkan_event(const char* op, E& event, const Device& device) {
  using Vulkan = std::conditional_t<std::is_const_v<E>, const VulkanEvent, VulkanEvent>;
  auto* mine = dynamic_cast<Vulkan*>(&event);
  if (mine == nullptr || &mine->device() != &device) {
    throw Error(std::string(op) + ": an event of " +
                (mine == nullptr ? "another backend" : "another Vulkan device"));
  }
  return *mine;
}

void expect_same_size(const char* op, std::size_t host, const Tensor& t) {
  if (host != t.bytes()) {
    throw Error(std::string(op) + ": " + std::to_string(host) + " host bytes for the " +
                std::to_string(t.bytes()) + "-byte tensor " + describe(t));
  }
}

// Every earlier write of a kernel or a copy is done and visible before any later access.
void full_barrier(const VolkDeviceTable& vk, VkCommandBuffer commands) {
  VkMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                          VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vk.vkCmdPipelineBarrier(commands, stages, stages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

// The device's writes are visible to the host once the batch's fence is signalled.
void host_barrier(const VolkDeviceTable& vk, VkCommandBuffer commands) {
  VkMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vk.vkCmdPipelineBarrier(commands,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

}  // namespace

VulkanStream::VulkanStream(std::shared_ptr<const Device> device) : device_(std::move(device)) {
  const VolkDeviceTable& vk = device_->vk();
  VkCommandPoolCreateInfo pool_info{};
  pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool_info.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pool_info.queueFamilyIndex = device_->queue_family();
  VkCommandPool pool = VK_NULL_HANDLE;
  check(vk.vkCreateCommandPool(device_->handle(), &pool_info, nullptr, &pool),
        "vkCreateCommandPool");
  pool_ = UniqueCommandPool(device_->dispatch(), pool);

  VkCommandBufferAllocateInfo buffer_info{};
  buffer_info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  buffer_info.commandPool = pool;
  buffer_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  buffer_info.commandBufferCount = 1;
  check(vk.vkAllocateCommandBuffers(device_->handle(), &buffer_info, &commands_),
        "vkAllocateCommandBuffers");

  VkFenceCreateInfo fence_info{};
  fence_info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkFence fence = VK_NULL_HANDLE;
  check(vk.vkCreateFence(device_->handle(), &fence_info, nullptr, &fence), "vkCreateFence");
  fence_ = UniqueFence(device_->dispatch(), fence);

  report_ = device_->memory(MemoryKind::staging).allocate(kReportWords * 4);
  std::memset(report_.mapped, 0, kReportWords * 4);
}

VulkanStream::~VulkanStream() {
  // Work recorded since the last synchronize was never submitted: it is dropped.
  Allocator& staging = device_->memory(MemoryKind::staging);
  for (const Allocation& chunk : staging_) staging.release(chunk);
  staging.release(report_);
}

VkCommandBuffer VulkanStream::command_buffer() {
  if (!recording_) {
    VkCommandBufferBeginInfo info{};
    info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(device_->vk().vkBeginCommandBuffer(commands_, &info), "vkBeginCommandBuffer");
    recording_ = true;
  }
  return commands_;
}

VkCommandBuffer VulkanStream::next_command() {
  const VkCommandBuffer commands = command_buffer();
  full_barrier(device_->vk(), commands);
  return commands;
}

VulkanStream::Staged VulkanStream::stage(VkDeviceSize bytes) {
  const VkDeviceSize size = (bytes + kStagingAlignment - 1) / kStagingAlignment * kStagingAlignment;
  if (staging_.empty() || staging_used_ + size > staging_.back().size) {
    staging_.push_back(
        device_->memory(MemoryKind::staging).allocate(std::max(size, kStagingChunkBytes)));
    staging_used_ = 0;
  }
  const Allocation& chunk = staging_.back();
  const Staged staged{{chunk.buffer, chunk.offset + staging_used_, bytes},
                      chunk.mapped + staging_used_};
  staging_used_ += size;
  return staged;
}

void VulkanStream::upload(std::span<const std::byte> host, const Tensor& dst) {
  const BufferRange to = tensor_bytes("upload", "dst", dst, *device_);
  expect_same_size("upload", host.size(), dst);
  if (host.empty()) return;
  const Staged staged = stage(host.size());
  std::memcpy(staged.host, host.data(), host.size());
  const VkBufferCopy region{staged.range.offset, to.offset, to.size};
  device_->vk().vkCmdCopyBuffer(next_command(), staged.range.buffer, to.buffer, 1, &region);
}

void VulkanStream::download(const Tensor& src, std::span<std::byte> host) {
  const BufferRange from = tensor_bytes("download", "src", src, *device_);
  expect_same_size("download", host.size(), src);
  if (host.empty()) return;
  const Staged staged = stage(host.size());
  const VkBufferCopy region{from.offset, staged.range.offset, from.size};
  device_->vk().vkCmdCopyBuffer(next_command(), from.buffer, staged.range.buffer, 1, &region);
  downloads_.push_back({staged.host, host});
}

void VulkanStream::copy(const Tensor& src, const Tensor& dst) {
  if (src.type != dst.type || src.rows != dst.rows || src.cols != dst.cols) {
    throw Error("copy: src is " + describe(src) + " and dst " + describe(dst) +
                "; they must match");
  }
  const BufferRange from = tensor_bytes("copy", "src", src, *device_);
  const BufferRange to = tensor_bytes("copy", "dst", dst, *device_);
  if (from.size == 0) return;
  if (from.buffer == to.buffer && from.offset < to.offset + to.size &&
      to.offset < from.offset + from.size) {
    throw Error("copy: src and dst (" + describe(src) +
                ") overlap in one buffer; the Vulkan backend copies only between disjoint "
                "tensors");
  }
  const VkBufferCopy region{from.offset, to.offset, from.size};
  device_->vk().vkCmdCopyBuffer(next_command(), from.buffer, to.buffer, 1, &region);
}

void VulkanStream::zero(const BufferRange& range) {
  device_->vk().vkCmdFillBuffer(next_command(), range.buffer, range.offset, range.size, 0);
}

BufferRange VulkanStream::index_report(std::string what) {
  report_what_ = std::move(what);
  return {report_.buffer, report_.offset, kReportWords * 4};
}

VkDescriptorSet VulkanStream::allocate_set(const Pipeline& pipeline) {
  const VkDescriptorSetLayout layout = pipeline.set_layout();
  VkDescriptorSetAllocateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  info.descriptorSetCount = 1;
  info.pSetLayouts = &layout;
  for (;; ++descriptor_pool_) {
    if (descriptor_pool_ == descriptor_pools_.size()) {
      const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kPoolSets * kPoolBuffers};
      VkDescriptorPoolCreateInfo pool_info{};
      pool_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
      pool_info.maxSets = kPoolSets;
      pool_info.poolSizeCount = 1;
      pool_info.pPoolSizes = &size;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      check(device_->vk().vkCreateDescriptorPool(device_->handle(), &pool_info, nullptr, &pool),
            "vkCreateDescriptorPool");
      descriptor_pools_.emplace_back(device_->dispatch(), pool);
    }
    info.descriptorPool = descriptor_pools_[descriptor_pool_].get();
    VkDescriptorSet set = VK_NULL_HANDLE;
    const VkResult result = device_->vk().vkAllocateDescriptorSets(device_->handle(), &info, &set);
    if (result == VK_SUCCESS) return set;
    // A full pool: the sets come from the next one (made if there is none).
    if (result != VK_ERROR_OUT_OF_POOL_MEMORY && result != VK_ERROR_FRAGMENTED_POOL) {
      check(result, "vkAllocateDescriptorSets");
    }
  }
}

void VulkanStream::bind(const Pipeline& pipeline, std::span<const BufferRange> buffers) {
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkWriteDescriptorSet> writes;
  infos.reserve(buffers.size());
  for (const BufferRange& b : buffers) infos.push_back({b.buffer, b.offset, b.size});
  for (std::uint32_t i = 0; i < buffers.size(); ++i) {
    VkWriteDescriptorSet write{};
    write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    write.dstBinding = i;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = &infos[i];
    writes.push_back(write);
  }
  const VolkDeviceTable& vk = device_->vk();
  if (device_->push_descriptors()) {
    vk.vkCmdPushDescriptorSetKHR(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout(), 0,
                                 std::uint32_t(writes.size()), writes.data());
    return;
  }
  const VkDescriptorSet set = allocate_set(pipeline);
  for (VkWriteDescriptorSet& write : writes) write.dstSet = set;
  vk.vkUpdateDescriptorSets(device_->handle(), std::uint32_t(writes.size()), writes.data(), 0,
                            nullptr);
  vk.vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout(), 0, 1,
                             &set, 0, nullptr);
}

void VulkanStream::dispatch(const Kernel& kernel, std::span<const BufferRange> buffers,
                            std::span<const std::byte> push, std::array<std::uint32_t, 2> groups) {
  if (buffers.size() != kernel.buffers || push.size() != kernel.push_bytes) {
    throw Error(std::string("vulkan backend: kernel ") + kernel.name + " takes " +
                std::to_string(kernel.buffers) + " buffers and " +
                std::to_string(kernel.push_bytes) + " bytes of push constants, given " +
                std::to_string(buffers.size()) + " and " + std::to_string(push.size()));
  }
  const Pipeline& pipeline = device_->pipeline(kernel);
  const VolkDeviceTable& vk = device_->vk();
  const VkCommandBuffer commands = next_command();
  vk.vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.handle());
  bind(pipeline, buffers);
  if (!push.empty()) {
    vk.vkCmdPushConstants(commands, pipeline.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                          std::uint32_t(push.size()), push.data());
  }
  vk.vkCmdDispatch(commands, groups[0], groups[1], 1);
}

void VulkanStream::submit_and_wait() {
  const VolkDeviceTable& vk = device_->vk();
  host_barrier(vk, commands_);
  recording_ = false;
  check(vk.vkEndCommandBuffer(commands_), "vkEndCommandBuffer");
  device_->submit(commands_, fence_.get());
  const VkFence fence = fence_.get();
  check(vk.vkWaitForFences(device_->handle(), 1, &fence, VK_TRUE, UINT64_MAX),
        "vkWaitForFences on " + device_->name());
  check(vk.vkResetFences(device_->handle(), 1, &fence), "vkResetFences");
  for (const Download& d : downloads_) std::memcpy(d.host.data(), d.staged, d.host.size());
}

void VulkanStream::end_batch() {
  const VolkDeviceTable& vk = device_->vk();
  downloads_.clear();
  check(vk.vkResetCommandPool(device_->handle(), pool_.get(), 0), "vkResetCommandPool");
  for (const UniqueDescriptorPool& pool : descriptor_pools_) {
    check(vk.vkResetDescriptorPool(device_->handle(), pool.get(), 0), "vkResetDescriptorPool");
  }
  descriptor_pool_ = 0;
  Allocator& staging = device_->memory(MemoryKind::staging);
  const bool keep_first = !staging_.empty() && staging_.front().size == kStagingChunkBytes;
  for (std::size_t i = keep_first ? 1 : 0; i < staging_.size(); ++i) staging.release(staging_[i]);
  staging_.resize(keep_first ? 1 : 0);
  staging_used_ = 0;
  ++clock_->done;
}

void VulkanStream::expect_no_index_error() {
  auto* words = reinterpret_cast<std::uint32_t*>(report_.mapped);
  if (words[0] == 0) return;
  const std::string message = report_what_ + " " + std::to_string(std::int32_t(words[2])) +
                              " at position " + std::to_string(words[1]) + " is outside [0, " +
                              std::to_string(words[3]) + ")";
  std::memset(report_.mapped, 0, kReportWords * 4);
  throw Error(message);
}

void VulkanStream::synchronize() {
  if (recording_) {
    try {
      submit_and_wait();
    } catch (...) {
      end_batch();
      throw;
    }
  }
  end_batch();
  expect_no_index_error();
  device_->instance().expect_valid("a stream's work on " + device_->name());
}

std::shared_ptr<Event> VulkanStream::make_event() {
  if (device_->limits().timestamp_bits == 0) {
    throw Error("make_event: the compute queue of " + device_->name() +
                " writes no timestamps, which events need");
  }
  return std::make_shared<VulkanEvent>(device_);
}

void VulkanStream::record(Event& event) {
  VulkanEvent& mine = vulkan_event("record", event, *device_);
  const VkCommandBuffer commands = command_buffer();
  device_->vk().vkCmdResetQueryPool(commands, mine.pool(), 0, 1);
  device_->vk().vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, mine.pool(), 0);
  mine.recorded(clock_, clock_->done);
}

double VulkanStream::seconds_between(const Event& start, const Event& end) const {
  const VulkanEvent* events[] = {&vulkan_event("seconds_between", start, *device_),
                                 &vulkan_event("seconds_between", end, *device_)};
  std::uint64_t ticks[2] = {};
  for (int i = 0; i < 2; ++i) {
    if (!events[i]->reached()) {
      throw Error(std::string("seconds_between: the ") + (i == 0 ? "start" : "end") +
                  " event was not reached yet; record it, then synchronize its stream");
    }
    check(device_->vk().vkGetQueryPoolResults(device_->handle(), events[i]->pool(), 0, 1,
                                              sizeof(ticks[i]), &ticks[i], sizeof(ticks[i]),
                                              VK_QUERY_RESULT_64_BIT),
          "vkGetQueryPoolResults");
  }
  const std::uint32_t bits = device_->limits().timestamp_bits;
  const std::uint64_t mask = bits >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << bits) - 1;
  // Unsigned arithmetic in the valid bits also spans a counter that wrapped between the two.
  const std::uint64_t elapsed = (ticks[1] - ticks[0]) & mask;
  return double(elapsed) * device_->limits().timestamp_period_ns * 1e-9;
}

VulkanStream& vulkan_stream(const char* op, Stream& stream, const Device& device) {
  auto* mine = dynamic_cast<VulkanStream*>(&stream);
  if (mine == nullptr || &mine->device() != &device) {
    throw Error(std::string(op) + ": the stream is " +
                (mine == nullptr ? "another backend's" : "another Vulkan device's") +
                "; use a stream of this backend (Backend::make_stream)");
  }
  return *mine;
}

}  // namespace cocktail::vulkan
