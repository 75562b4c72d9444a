#pragma once

#include <volk.h>

#include <cstdint>
#include <span>

#include "runtime/handles.hpp"

namespace cocktail::vulkan {

// A compute shader as dispatch code calls it: its SPIR-V (compiled from shaders/ at build
// time), the storage buffers it binds (bindings 0 to buffers - 1, in that order) and the size
// of its push constants. Defined once each (compute/kernels.hpp); devices make their pipelines
// from it at first use.
struct Kernel {
  const char* name;
  std::span<const std::uint32_t> spirv;
  std::uint32_t buffers;
  std::uint32_t push_bytes;
};

// A kernel made ready to run on one device: a descriptor set layout of its storage buffers
// (for push descriptors when the device has them), the pipeline layout with its push
// constants, and the compute pipeline.
class Pipeline {
 public:
  Pipeline(const DeviceDispatch& device, VkPipelineCache cache, const Kernel& kernel,
           bool push_descriptors);

  const Kernel& kernel() const { return kernel_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_.get(); }
  VkPipelineLayout layout() const { return layout_.get(); }
  VkPipeline handle() const { return pipeline_.get(); }

 private:
  const Kernel& kernel_;
  UniqueDescriptorSetLayout set_layout_;
  UniquePipelineLayout layout_;
  UniquePipeline pipeline_;
};

}  // namespace cocktail::vulkan
