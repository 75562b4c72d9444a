#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <span>

#include "cocktail/quantizer.hpp"
#include "gpu_common/tile_format.hpp"
#include "memory/vulkan_stream.hpp"
#include "runtime/device.hpp"

namespace cocktail::vulkan {

// Packs and unpacks one block on a Vulkan device, in the GPU tile format's block
// (gpu_common/tile_format.hpp: token-major codes, planar units, FP16 constants), with the kernels'
// quantization code that commits run (shaders/quantize_block.glsl). The block is always stored
// token-major: CodeOrder names how a CPU block lays out its codes, and this format has one
// order. Each call runs on a stream of its own and waits for it.
class VulkanQuantizer final : public Quantizer {
 public:
  // An Error when the group size is not positive.
  VulkanQuantizer(std::shared_ptr<const Device> device, const QuantSpec& spec);

  const QuantSpec& spec() const override { return spec_; }
  std::size_t packed_bytes(const BlockShape& shape) const override;
  // Writes exactly packed_bytes(shape) bytes. An Error, after writing them, for a value that is
  // not finite or that (or its group's constants) is beyond FP16, naming its token and channel.
  void pack(std::span<const float> values, const BlockShape& shape,
            std::span<std::byte> packed) const override;
  void unpack(std::span<const std::byte> packed, const BlockShape& shape,
              std::span<float> values) const override;

 private:
  // The block format of `shape` (gpu::quantizer_format). An Error naming `call` unless there are
  // the block's n_values and at least its packed bytes, and the values fit one storage binding.
  gpu::BlockFormat checked_format(const BlockShape& shape, std::size_t n_values,
                                  std::size_t n_bytes, const char* call) const;
  void check_fault(std::span<const std::uint32_t> fault, const gpu::BlockFormat& f) const;

  std::shared_ptr<const Device> device_;
  QuantSpec spec_;
  mutable std::mutex mutex_;  // one call at a time on the stream
  mutable VulkanStream stream_;
};

}  // namespace cocktail::vulkan
