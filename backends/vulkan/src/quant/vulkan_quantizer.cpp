#include "quant/vulkan_quantizer.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "cocktail/error.hpp"
#include "cocktail/quantizer_checks.hpp"
#include "compute/kernels.hpp"
#include "gpu_common/quantizer_format.hpp"
#include "quant/kernels.hpp"

namespace cocktail::vulkan {

namespace {

constexpr const char* kName = "VulkanQuantizer";

BufferRange whole(const VulkanBuffer& memory) {
  return {memory.allocation().buffer, memory.allocation().offset, memory.size()};
}

Tensor words_of(VulkanBuffer& memory) {
  return {&memory, 0, ElementType::i32, std::int64_t(memory.size() / 4), 1};
}

template <class Push>
void run(VulkanStream& stream, const Kernel& kernel, std::initializer_list<BufferRange> buffers,
         const Push& push, std::array<std::uint32_t, 2> groups) {
  stream.dispatch(kernel, std::span(buffers.begin(), buffers.size()),
                  std::as_bytes(std::span(&push, 1)), groups);
}

}  // namespace

VulkanQuantizer::VulkanQuantizer(std::shared_ptr<const Device> device, const QuantSpec& spec)
    : device_(std::move(device)), spec_(spec), stream_(device_) {
  if (spec.group_size < 1) {
    throw Error("VulkanQuantizer (" + std::string(to_string(spec.precision)) + "): group size " +
                std::to_string(spec.group_size) + " is not positive");
  }
}

std::size_t VulkanQuantizer::packed_bytes(const BlockShape& shape) const {
  return gpu::quantizer_format(kName, "packed_bytes", spec_, shape).bytes();
}

gpu::BlockFormat VulkanQuantizer::checked_format(const BlockShape& shape, std::size_t n_values,
                                                 std::size_t n_bytes, const char* call) const {
  const gpu::BlockFormat f = gpu::quantizer_format(kName, call, spec_, shape);
  check_quantizer_spans(kName, call, spec_, shape, n_values, n_bytes, f.bytes());
  if (n_values * sizeof(float) > device_->limits().max_storage_range) {
    throw Error(quantizer_call(kName, call, spec_) + describe_block(f.tokens, f.head_dim) +
                " of floats is more than " + "one storage binding of " + device_->name() +
                " covers (maxStorageBufferRange, " +
                std::to_string(device_->limits().max_storage_range) + " bytes)");
  }
  return f;
}

void VulkanQuantizer::pack(std::span<const float> values, const BlockShape& shape,
                           std::span<std::byte> packed) const {
  const gpu::BlockFormat f = checked_format(shape, values.size(), packed.size(), "pack");
  if (values.empty()) return;
  const std::scoped_lock lock(mutex_);
  VulkanBuffer input(device_, values.size_bytes());
  VulkanBuffer output(device_, f.bytes());
  VulkanBuffer fault(device_, kPackFaultWords * sizeof(std::uint32_t));
  std::array<std::uint32_t, kPackFaultWords> found;
  found.fill(kNoFault);
  stream_.upload(std::as_bytes(values), words_of(input));
  stream_.upload(std::as_bytes(std::span(found)), words_of(fault));
  const QuantPackPush push{format_push(f), std::uint32_t(spec_.range)};
  // One workgroup: its invocations share the group constants through the block they write.
  run(stream_, kQuantPack, {whole(output), whole(input), whole(fault)}, push, {1, 1});
  stream_.download(words_of(output), packed.first(f.bytes()));
  stream_.download(words_of(fault), std::as_writable_bytes(std::span(found)));
  stream_.synchronize();
  check_fault(found, f);
}

void VulkanQuantizer::check_fault(std::span<const std::uint32_t> fault,
                                  const gpu::BlockFormat& f) const {
  const auto channels = std::uint32_t(f.head_dim);
  auto at = [&](std::uint32_t site) {
    return " at token " + std::to_string(site / channels) + ", channel " +
           std::to_string(site % channels) + " of " + describe_block(f.tokens, f.head_dim);
  };
  if (fault[0] != kNoFault) {
    throw Error(quantizer_call(kName, "pack", spec_) + "non-finite value" + at(fault[0]));
  }
  if (fault[1] != kNoFault) {
    throw Error(quantizer_call(kName, "pack", spec_) +
                (f.precision == Precision::fp16 ? "the value" : "a value in the group starting") +
                at(fault[1]) + " is beyond the FP16 range");
  }
}

void VulkanQuantizer::unpack(std::span<const std::byte> packed, const BlockShape& shape,
                             std::span<float> values) const {
  const gpu::BlockFormat f = checked_format(shape, values.size(), packed.size(), "unpack");
  if (values.empty()) return;
  const std::scoped_lock lock(mutex_);
  VulkanBuffer input(device_, f.bytes());
  VulkanBuffer output(device_, values.size_bytes());
  stream_.upload(packed.first(f.bytes()), words_of(input));
  const QuantUnpackPush push{format_push(f), 0, std::uint32_t(f.bytes()), 1, 0};
  const std::size_t groups = (values.size() + kWorkgroup - 1) / kWorkgroup;
  run(stream_, kQuantUnpack, {whole(input), whole(output)}, push,
      {std::uint32_t(std::min<std::size_t>(groups, device_->limits().max_groups)), 1});
  stream_.download(words_of(output), std::as_writable_bytes(values));
  stream_.synchronize();
}

}  // namespace cocktail::vulkan
