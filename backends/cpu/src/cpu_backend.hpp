#pragma once

#include "cocktail/backend.hpp"
#include "cocktail/backend_provider.hpp"
#include "cocktail/options.hpp"
#include "compute/cpu_compute.hpp"

namespace cocktail::cpu {

// What [backend.cpu] sets: threads (0 = all cores), matmul_activations (how quantized-weight
// matmuls round activations) and row_group_weights (whether Compute::upload copies matrices for
// the decode GEMV). Its `simd` key (the kernels' SIMD target) is applied process-wide when the
// provider is made (simd_target.hpp).
struct CpuSettings {
  int threads = 0;
  MatmulActivations activations = MatmulActivations::int16;
  bool row_groups = true;
};

// The reference backend: runs on x86-64 (and fixed-width Arm NEON), with the SIMD target
// (SSE4, AVX2, AVX-512, ...) chosen at run time. Its device is this machine's CPU and memory.
class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const CpuSettings& settings = {}) : settings_(settings) {}

  std::string_view name() const override { return "cpu"; }
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
  CpuSettings settings_;
};

// The CPU backend's plugin object: one device, the CPU this runs on.
class CpuBackendProvider final : public BackendProvider {
 public:
  // Reads [backend.cpu].
  explicit CpuBackendProvider(Options& options);

  std::string_view name() const override { return "cpu"; }
  Availability availability() const override;
  std::vector<DeviceInfo> devices() const override;
  std::shared_ptr<Backend> make_backend(int device) override;

 private:
  CpuSettings settings_;
};

}  // namespace cocktail::cpu
