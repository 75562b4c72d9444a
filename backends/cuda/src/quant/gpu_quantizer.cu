#include <string>
#include <utility>

#include "cocktail/error.hpp"
#include "quant/gpu_quantizer.hpp"
#include "quant/quantizer_kernels.cuh"
#include "runtime/gpu_buffer.hpp"
#include "runtime/gpu_check.hpp"

namespace cocktail::gpu {
namespace {

constexpr int kMaxGroupSize = 4096;

std::string describe(const QuantSpec& spec) {
  return std::string(to_string(spec.precision)) + ", per-" + std::string(to_string(spec.axis)) +
         " groups of " + std::to_string(spec.group_size);
}

// "GpuQuantizer::pack (int4, per-token groups of 32): ", the start of each message.
std::string where(const char* call, const QuantSpec& spec) {
  return std::string("GpuQuantizer::") + call + " (" + describe(spec) + "): ";
}

// "a 48x96 block"
std::string block_text(int tokens, int channels) {
  return "a " + std::to_string(tokens) + "x" + std::to_string(channels) + " block";
}

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

BlockFormat GpuQuantizer::format(const BlockShape& shape, const char* call) const {
  if (shape.tokens < 0 || shape.channels < 0) {
    throw Error(where(call, spec_) + block_text(shape.tokens, shape.channels) +
                " has a negative size");
  }
  // A row of planar units is whole units, or whole units and one half unit of INT2.
  if (precision_bits(spec_.precision) < 8 && shape.channels % 32 != 0) {
    throw Error(where(call, spec_) + block_text(shape.tokens, shape.channels) +
                " cannot be packed: " + std::string(to_string(spec_.precision)) +
                " codes need a multiple of 32 channels");
  }
  return {spec_.precision, spec_.axis, shape.tokens, shape.channels, spec_.group_size};
}

std::size_t GpuQuantizer::packed_bytes(const BlockShape& shape) const {
  return format(shape, "packed_bytes").bytes();
}

void GpuQuantizer::check_spans(std::size_t n_values, std::size_t n_bytes, const BlockFormat& f,
                               const char* call) const {
  const std::size_t need = std::size_t(f.tokens) * std::size_t(f.head_dim);
  if (n_values != need) {
    throw Error(where(call, spec_) + std::to_string(n_values) + " values for " +
                block_text(f.tokens, f.head_dim) + ", need " + std::to_string(need));
  }
  if (n_bytes < f.bytes()) {
    throw Error(where(call, spec_) + std::to_string(n_bytes) + " bytes for " +
                block_text(f.tokens, f.head_dim) + ", need " + std::to_string(f.bytes()));
  }
}

void GpuQuantizer::pack(std::span<const float> values, const BlockShape& shape,
                        std::span<std::byte> packed) const {
  const BlockFormat f = format(shape, "pack");
  check_spans(values.size(), packed.size(), f, "pack");
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
           std::to_string(site % channels) + " of " + block_text(f.tokens, f.head_dim);
  };
  if (fault.non_finite != kNoSite) {
    throw Error(where("pack", spec_) + "non-finite value" + at(fault.non_finite));
  }
  if (fault.beyond_half != kNoSite) {
    throw Error(where("pack", spec_) +
                (f.precision == Precision::fp16 ? "the value" : "a value in the group starting") +
                at(fault.beyond_half) + " is beyond the FP16 range");
  }
}

void GpuQuantizer::unpack(std::span<const std::byte> packed, const BlockShape& shape,
                          std::span<float> values) const {
  const BlockFormat f = format(shape, "unpack");
  check_spans(values.size(), packed.size(), f, "unpack");
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
