#include <string>
#include <utility>

#include "cocktail/error.hpp"
#include "cocktail/quantizer_checks.hpp"
#include "gpu_common/quantizer_format.hpp"
#include "quant/gpu_quantizer.hpp"
#include "quant/quantizer_kernels.cuh"
#include "runtime/gpu_buffer.hpp"
#include "runtime/gpu_check.hpp"

namespace cocktail::gpu {
namespace {

constexpr int kMaxGroupSize = 4096;
constexpr const char* kName = "GpuQuantizer";

// Where a part of the call's one device allocation starts.
struct DeviceParts {
  std::size_t values = 0;
  std::size_t packed = 0;
  std::size_t fault = 0;
  std::size_t total = 0;
};

DeviceParts device_parts(std::size_t n_values, std::size_t packed_bytes) {
  DeviceParts parts;
  parts.packed = align_tile(n_values * sizeof(float));
  parts.fault = parts.packed + align_tile(packed_bytes);
  parts.total = parts.fault + align_tile(sizeof(QuantizeFault));
  return parts;
}

}  // namespace

GpuQuantizer::GpuQuantizer(std::shared_ptr<const GpuDevice> device, const QuantSpec& spec)
    : device_(std::move(device)), spec_(spec) {
  if (spec.group_size < 1 || spec.group_size > kMaxGroupSize) {
    throw Error("GpuQuantizer (" + std::string(to_string(spec.precision)) + "): group size " +
                std::to_string(spec.group_size) + " is outside [1, " +
                std::to_string(kMaxGroupSize) + "]");
  }
  use_device(*device_);
  stream_ = std::make_unique<GpuStream>(device_->index);
}

std::size_t GpuQuantizer::packed_bytes(const BlockShape& shape) const {
  return quantizer_format(kName, "packed_bytes", spec_, shape).bytes();
}

void GpuQuantizer::pack(std::span<const float> values, const BlockShape& shape,
                        std::span<std::byte> packed) const {
  const BlockFormat f = quantizer_format(kName, "pack", spec_, shape);
  check_quantizer_spans(kName, "pack", spec_, shape, values.size(), packed.size(), f.bytes());
  use_device(*device_);
  const cudaStream_t stream = stream_->native();
  const DeviceParts parts = device_parts(values.size(), f.bytes());
  const GpuBuffer memory(parts.total, device_->index);
  std::byte* base = memory.data();
  const QuantizeFault clean;
  QuantizeFault fault;
  COCKTAIL_GPU_CHECK(cudaMemcpyAsync(base + parts.values, values.data(), values.size_bytes(),
                                     cudaMemcpyHostToDevice, stream));
  COCKTAIL_GPU_CHECK(
      cudaMemcpyAsync(base + parts.fault, &clean, sizeof clean, cudaMemcpyHostToDevice, stream));
  COCKTAIL_GPU_CHECK(cudaMemsetAsync(base + parts.packed, 0, f.bytes(), stream));
  launch_pack(stream, f, spec_.range, reinterpret_cast<const float*>(base + parts.values),
              base + parts.packed, reinterpret_cast<QuantizeFault*>(base + parts.fault));
  COCKTAIL_GPU_CHECK(cudaMemcpyAsync(packed.data(), base + parts.packed, f.bytes(),
                                     cudaMemcpyDeviceToHost, stream));
  COCKTAIL_GPU_CHECK(
      cudaMemcpyAsync(&fault, base + parts.fault, sizeof fault, cudaMemcpyDeviceToHost, stream));
  COCKTAIL_GPU_CHECK(cudaStreamSynchronize(stream));
  check_fault(fault, f);
}

void GpuQuantizer::check_fault(const QuantizeFault& fault, const BlockFormat& f) const {
  const auto channels = static_cast<unsigned long long>(f.head_dim);
  auto at = [&](unsigned long long site) {
    return " at token " + std::to_string(site / channels) + ", channel " +
           std::to_string(site % channels) + " of " + describe_block(f.tokens, f.head_dim);
  };
  if (fault.non_finite != kNoSite) {
    throw Error(quantizer_call(kName, "pack", spec_) + "non-finite value" + at(fault.non_finite));
  }
  if (fault.beyond_half != kNoSite) {
    throw Error(quantizer_call(kName, "pack", spec_) +
                (f.precision == Precision::fp16 ? "the value" : "a value in the group starting") +
                at(fault.beyond_half) + " is beyond the FP16 range");
  }
}

void GpuQuantizer::unpack(std::span<const std::byte> packed, const BlockShape& shape,
                          std::span<float> values) const {
  const BlockFormat f = quantizer_format(kName, "unpack", spec_, shape);
  check_quantizer_spans(kName, "unpack", spec_, shape, values.size(), packed.size(), f.bytes());
  use_device(*device_);
  const cudaStream_t stream = stream_->native();
  const DeviceParts parts = device_parts(values.size(), f.bytes());
  const GpuBuffer memory(parts.total, device_->index);
  std::byte* base = memory.data();
  COCKTAIL_GPU_CHECK(cudaMemcpyAsync(base + parts.packed, packed.data(), f.bytes(),
                                     cudaMemcpyHostToDevice, stream));
  launch_unpack(stream, f, base + parts.packed, reinterpret_cast<float*>(base + parts.values));
  COCKTAIL_GPU_CHECK(cudaMemcpyAsync(values.data(), base + parts.values, values.size_bytes(),
                                     cudaMemcpyDeviceToHost, stream));
  COCKTAIL_GPU_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace cocktail::gpu
