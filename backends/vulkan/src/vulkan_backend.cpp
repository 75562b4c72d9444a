#include "vulkan_backend.hpp"

#include <algorithm>

#include "attention/vulkan_attention.hpp"
#include "bandwidth.hpp"
#include "cocktail/error.hpp"
#include "compute/vulkan_compute.hpp"
#include "kv/vulkan_kv_store.hpp"
#include "memory/vulkan_buffer.hpp"
#include "memory/vulkan_stream.hpp"
#include "quant/vulkan_quantizer.hpp"

namespace cocktail::vulkan {

std::shared_ptr<Quantizer> VulkanBackend::make_quantizer(const QuantSpec& spec) {
  return std::make_shared<VulkanQuantizer>(device_, spec);
}

std::shared_ptr<KvStore> VulkanBackend::make_kv_store(const KvStoreOptions& options) {
  return std::make_shared<VulkanKvStore>(device_, options);
}

std::shared_ptr<AttentionExecutor> VulkanBackend::make_attention() {
  return std::make_shared<VulkanAttention>(device_);
}

std::shared_ptr<Compute> VulkanBackend::make_compute() {
  return std::make_shared<VulkanCompute>(device_);
}

std::shared_ptr<Buffer> VulkanBackend::allocate(std::size_t bytes) {
  return std::make_shared<VulkanBuffer>(device_, bytes);
}

std::shared_ptr<Stream> VulkanBackend::make_stream() {
  return std::make_shared<VulkanStream>(device_);
}

std::shared_ptr<Buffer> VulkanBackend::wrap_memory(void* /*memory*/, std::size_t /*bytes*/) {
  throw Error(
      "vulkan backend: wrap_memory cannot wrap a host's memory: Vulkan has no raw device "
      "pointers, and memory belongs to the VkDevice that allocated it. Allocate with "
      "Backend::allocate and fill it with Stream::upload");
}

std::shared_ptr<Stream> VulkanBackend::wrap_stream(void* /*native_stream*/) {
  throw Error(
      "vulkan backend: wrap_stream cannot wrap a host's queue: a VkQueue belongs to the "
      "VkDevice that made it, and the backend runs on a device of its own. Make a stream with "
      "Backend::make_stream and order it with the host's work through Stream::synchronize");
}

double VulkanBackend::measure_read_bandwidth(std::size_t bytes) {
  return vulkan::measure_read_bandwidth(device_, bytes);
}

VulkanBackendProvider::VulkanBackendProvider(Options& options)
    : settings_{options.get_bool("push_descriptors", true)} {}

const VulkanBackendProvider::Probe& VulkanBackendProvider::probe() const {
  std::call_once(probed_, [this] {
    try {
      probe_.instance = Instance::shared();
      probe_.devices = physical_devices(probe_.instance->handle());
      probe_.instance->expect_valid("listing the devices");
    } catch (const Error& e) {
      probe_ = {nullptr, {}, e.what()};
    }
  });
  return probe_;
}

Availability VulkanBackendProvider::availability() const {
  const Probe& found = probe();
  if (!found.failure.empty()) return {0, found.failure};
  if (found.devices.empty()) {
    return {0,
            "the Vulkan loader finds no device: no Vulkan driver is installed (Debian: "
            "mesa-vulkan-drivers, or the GPU vendor's driver)"};
  }
  const auto best = std::max_element(found.devices.begin(), found.devices.end(),
                                     [](const PhysicalDevice& a, const PhysicalDevice& b) {
                                       return a.info.availability.score < b.info.availability.score;
                                     });
  return best->info.availability;
}

std::vector<DeviceInfo> VulkanBackendProvider::devices() const {
  std::vector<DeviceInfo> out;
  for (const PhysicalDevice& d : probe().devices) out.push_back(d.info);
  return out;
}

std::shared_ptr<Backend> VulkanBackendProvider::make_backend(int device) {
  const Probe& found = probe();
  if (!found.failure.empty()) throw Error(found.failure);
  if (device < 0 || std::size_t(device) >= found.devices.size()) {
    throw Error("backend 'vulkan' has " + std::to_string(found.devices.size()) +
                " device(s); there is no device " + std::to_string(device));
  }
  const PhysicalDevice& chosen = found.devices[std::size_t(device)];
  if (chosen.info.availability.score <= 0) {
    throw Error("backend 'vulkan' cannot run on device " + std::to_string(device) + " (" +
                chosen.info.name + "): " + chosen.info.availability.reason);
  }
  return std::make_shared<VulkanBackend>(
      std::make_shared<const Device>(found.instance, chosen, settings_.push_descriptors));
}

}  // namespace cocktail::vulkan
