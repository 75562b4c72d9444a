#include "runtime/pipeline.hpp"

#include <string>
#include <vector>

#include "runtime/vk_check.hpp"

namespace cocktail::vulkan {

namespace {

UniqueDescriptorSetLayout make_set_layout(const DeviceDispatch& device, const Kernel& kernel,
                                          bool push_descriptors) {
  std::vector<VkDescriptorSetLayoutBinding> bindings(kernel.buffers);
  for (std::uint32_t i = 0; i < kernel.buffers; ++i) {
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  if (push_descriptors) info.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  info.bindingCount = kernel.buffers;
  info.pBindings = bindings.data();
  VkDescriptorSetLayout layout = VK_NULL_HANDLE;
  check(device.vk.vkCreateDescriptorSetLayout(device.device, &info, nullptr, &layout),
        std::string("vkCreateDescriptorSetLayout of kernel ") + kernel.name);
  return {device, layout};
}

UniquePipelineLayout make_layout(const DeviceDispatch& device, const Kernel& kernel,
                                 VkDescriptorSetLayout set_layout) {
  const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kernel.push_bytes};
  VkPipelineLayoutCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  info.setLayoutCount = 1;
  info.pSetLayouts = &set_layout;
  info.pushConstantRangeCount = kernel.push_bytes > 0 ? 1 : 0;
  info.pPushConstantRanges = &push;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  check(device.vk.vkCreatePipelineLayout(device.device, &info, nullptr, &layout),
        std::string("vkCreatePipelineLayout of kernel ") + kernel.name);
  return {device, layout};
}

UniquePipeline make_pipeline(const DeviceDispatch& device, VkPipelineCache cache,
                             const Kernel& kernel, VkPipelineLayout layout) {
  VkShaderModuleCreateInfo module_info{};
  module_info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  module_info.codeSize = kernel.spirv.size_bytes();
  module_info.pCode = kernel.spirv.data();
  VkShaderModule module = VK_NULL_HANDLE;
  check(device.vk.vkCreateShaderModule(device.device, &module_info, nullptr, &module),
        std::string("vkCreateShaderModule of kernel ") + kernel.name);
  const UniqueShaderModule owned_module(device, module);  // needed only to make the pipeline

  VkComputePipelineCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.layout = layout;
  VkPipeline pipeline = VK_NULL_HANDLE;
  check(device.vk.vkCreateComputePipelines(device.device, cache, 1, &info, nullptr, &pipeline),
        std::string("vkCreateComputePipelines of kernel ") + kernel.name);
  return {device, pipeline};
}

}  // namespace

Pipeline::Pipeline(const DeviceDispatch& device, VkPipelineCache cache, const Kernel& kernel,
                   bool push_descriptors)
    : kernel_(kernel),
      set_layout_(make_set_layout(device, kernel, push_descriptors)),
      layout_(make_layout(device, kernel, set_layout_.get())),
      pipeline_(make_pipeline(device, cache, kernel, layout_.get())) {}

}  // namespace cocktail::vulkan
