#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cocktail/backend.hpp"
#include "cocktail/backend_provider.hpp"
#include "cocktail/options.hpp"
#include "runtime/device.hpp"
#include "runtime/instance.hpp"
#include "runtime/physical_devices.hpp"

namespace cocktail::vulkan {

// What [backend.vulkan] sets: push_descriptors (bind kernels' buffers with
// VK_KHR_push_descriptor where the device has it; false binds through descriptor pools).
struct VulkanSettings {
  bool push_descriptors = true;
};

// The Vulkan backend on one device: buffers, streams and the Compute ops. Its KV store,
// attention and quantizer are still to come: making them is an Error that says so.
class VulkanBackend final : public Backend {
 public:
  explicit VulkanBackend(std::shared_ptr<const Device> device) : device_(std::move(device)) {}

  std::string_view name() const override { return "vulkan"; }
  DeviceInfo device() const override { return device_->info(); }

  std::shared_ptr<Quantizer> make_quantizer(const QuantSpec& spec) override;
  std::shared_ptr<KvStore> make_kv_store(const KvStoreOptions& options) override;
  std::shared_ptr<AttentionExecutor> make_attention() override;
  std::shared_ptr<Compute> make_compute() override;
  std::shared_ptr<Buffer> allocate(std::size_t bytes) override;
  std::shared_ptr<Stream> make_stream() override;
  std::shared_ptr<Buffer> wrap_memory(void* memory, std::size_t bytes) override;
  std::shared_ptr<Stream> wrap_stream(void* native_stream) override;
  double measure_read_bandwidth(std::size_t bytes) override;

  const std::shared_ptr<const Device>& vulkan_device() const { return device_; }

 private:
  std::shared_ptr<const Device> device_;
};

// The plugin object: the devices the Vulkan loader finds. The loader, the instance and the
// device list are probed at the first question and kept; no device is opened until
// make_backend. Without a loader or an instance, score 0 with the reason.
class VulkanBackendProvider final : public BackendProvider {
 public:
  // Reads [backend.vulkan].
  explicit VulkanBackendProvider(Options& options);

  std::string_view name() const override { return "vulkan"; }
  Availability availability() const override;
  std::vector<DeviceInfo> devices() const override;
  std::shared_ptr<Backend> make_backend(int device) override;

 private:
  struct Probe {
    std::shared_ptr<Instance> instance;
    std::vector<PhysicalDevice> devices;
    std::string failure;  // why there is no instance
  };
  const Probe& probe() const;

  VulkanSettings settings_;
  mutable std::once_flag probed_;
  mutable Probe probe_;
};

}  // namespace cocktail::vulkan
