#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/backend.hpp"
#include "cocktail/backend_provider.hpp"
#include "cocktail/options.hpp"
#include "runtime/gpu_device.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

// The CUDA backend (the HIP backend when built by backends/hip) on one GPU.
class GpuBackend final : public Backend {
 public:
  explicit GpuBackend(GpuDevice device);

  std::string_view name() const override { return kBackendName; }
  DeviceInfo device() const override;

  std::shared_ptr<Quantizer> make_quantizer(const QuantSpec& spec) override;
  std::shared_ptr<KvStore> make_kv_store(const KvStoreOptions& options) override;
  std::shared_ptr<AttentionExecutor> make_attention() override;
  std::shared_ptr<Compute> make_compute() override;
  std::shared_ptr<Buffer> allocate(std::size_t bytes) override;
  std::shared_ptr<Stream> make_stream() override;
  std::shared_ptr<Buffer> wrap_memory(void* memory, std::size_t bytes) override;
  std::shared_ptr<Stream> wrap_stream(void* native_stream) override;
  double measure_read_bandwidth(std::size_t bytes) override;

 private:
  std::shared_ptr<const GpuDevice> device_;
};

// The plugin object: the GPUs the runtime sees, probed without making a context where the
// runtime allows. No driver, no device, or a device this build has no code for: score 0 with
// that reason.
class GpuBackendProvider final : public BackendProvider {
 public:
  explicit GpuBackendProvider(Options& options);

  std::string_view name() const override { return kBackendName; }
  Availability availability() const override;
  std::vector<DeviceInfo> devices() const override;
  std::shared_ptr<Backend> make_backend(int device) override;

 private:
  std::vector<DeviceInfo> devices_;
  std::string no_device_;  // why devices_ is empty
};

}  // namespace cocktail::gpu
