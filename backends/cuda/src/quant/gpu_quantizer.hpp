#pragma once

#include <memory>
#include <span>

#include "cocktail/quantizer.hpp"
#include "gpu_common/tile_format.hpp"
#include "quant/quantize_fault.hpp"
#include "runtime/gpu_device.hpp"
#include "runtime/gpu_stream.hpp"

namespace cocktail::gpu {

// Packs and unpacks a block with the store's own device kernels (gpu_common/tile_format.hpp is the
// packed form; the code order of the BlockShape is the block's, the packed codes are always
// token-major), copying through device memory: the quantizer the conformance suite checks is
// the code that commits do. Each call runs on the quantizer's own stream and waits for it.
// Bit-packed precisions (NF4, INT4, INT2) need a multiple of 32 channels; other shapes, spans of
// the wrong size, and values that are not finite or beyond the FP16 range are Errors, as on the
// CPU.
class GpuQuantizer final : public Quantizer {
 public:
  GpuQuantizer(std::shared_ptr<const GpuDevice> device, const QuantSpec& spec);

  const QuantSpec& spec() const override { return spec_; }
  std::size_t packed_bytes(const BlockShape& shape) const override;
  void pack(std::span<const float> values, const BlockShape& shape,
            std::span<std::byte> packed) const override;
  void unpack(std::span<const std::byte> packed, const BlockShape& shape,
              std::span<float> values) const override;

 private:
  void check_fault(const QuantizeFault& fault, const BlockFormat& f) const;

  std::shared_ptr<const GpuDevice> device_;
  QuantSpec spec_;
  std::unique_ptr<GpuStream> stream_;
};

}  // namespace cocktail::gpu
