#include "cpu_backend.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "attention/attention.hpp"
#include "attention/tile_kernels.hpp"
#include "bandwidth.hpp"
#include "cocktail/error.hpp"
#include "compute/cpu_compute.hpp"
#include "kv_store.hpp"
#include "memory/cpu_buffer.hpp"
#include "memory/cpu_stream.hpp"
#include "quant/quantizer.hpp"
#include "simd_target.hpp"

namespace cocktail::cpu {

namespace {

// The CPU backend runs everywhere, so it scores low: any working accelerator backend wins
// `backend = "auto"`.
constexpr int kCpuScore = 10;

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.starts_with("model name")) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "CPU";
}

// This machine's CPU and its memory, as the CPU backend's one device.
DeviceInfo this_cpu() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  const std::size_t memory =
      pages > 0 && page_size > 0 ? std::size_t(pages) * std::size_t(page_size) : 0;
  return {cpu_model_name() + " (" + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " cores)",
          memory,
          {kCpuScore, std::string("runs on this CPU with SIMD target ") + simd_target_name()}};
}

// [backend.cpu] simd, applied as the provider is made, so that a bad name fails the config.
void apply_simd_option(Options& options) {
  const std::string name = options.get_string("simd", "auto");
  try {
    select_simd_target(name);
  } catch (const Error& e) {
    options.fail("simd", fmt::format("= \"{}\": {}", name, e.what()));
  }
}

MatmulActivations read_activations(Options& options) {
  const std::string name =
      options.get_choice("matmul_activations", "int16", {"int8", "int16", "f32"});
  if (name == "int8") return MatmulActivations::int8;
  return name == "int16" ? MatmulActivations::int16 : MatmulActivations::f32;
}

}  // namespace

CpuBackendProvider::CpuBackendProvider(Options& options)
    : settings_{int(options.get_int("threads", 0, 0, 1024)), read_activations(options),
                options.get_bool("row_group_weights", true)} {
  apply_simd_option(options);
}

Availability CpuBackendProvider::availability() const {
  return this_cpu().availability;
}

std::vector<DeviceInfo> CpuBackendProvider::devices() const {
  return {this_cpu()};
}

std::shared_ptr<Backend> CpuBackendProvider::make_backend(int device) {
  if (device != 0) {
    throw Error("backend 'cpu' has one device, 0; there is no device " + std::to_string(device));
  }
  return std::make_shared<CpuBackend>(settings_);
}

DeviceInfo CpuBackend::device() const {
  return this_cpu();
}

std::shared_ptr<Quantizer> CpuBackend::make_quantizer(const QuantSpec& spec) {
  return std::make_shared<CpuQuantizer>(spec);
}

std::shared_ptr<KvStore> CpuBackend::make_kv_store(const KvStoreOptions& options) {
  return std::make_shared<CpuKvStore>(options);
}

std::shared_ptr<AttentionExecutor> CpuBackend::make_attention() {
  return std::make_shared<CpuAttention>(settings_.threads);
}

std::shared_ptr<Compute> CpuBackend::make_compute() {
  return std::make_shared<CpuCompute>(settings_.threads, settings_.activations,
                                      settings_.row_groups);
}

std::shared_ptr<Buffer> CpuBackend::allocate(std::size_t bytes) {
  return std::make_shared<CpuBuffer>(bytes);
}

std::shared_ptr<Stream> CpuBackend::make_stream() {
  return std::make_shared<CpuStream>();
}

std::shared_ptr<Buffer> CpuBackend::wrap_memory(void* memory, std::size_t bytes) {
  if (memory == nullptr && bytes > 0) {
    throw Error("cpu backend: wrap_memory of " + std::to_string(bytes) + " bytes at null");
  }
  return std::make_shared<CpuBuffer>(static_cast<std::byte*>(memory), bytes);
}

std::shared_ptr<Stream> CpuBackend::wrap_stream(void* native_stream) {
  if (native_stream != nullptr) {
    throw Error(
        "cpu backend: wrap_stream takes null: its work runs in the calling thread, in order "
        "with the host's own");
  }
  return std::make_shared<CpuStream>();
}

double CpuBackend::measure_read_bandwidth(std::size_t bytes) {
  return cpu::measure_read_bandwidth(bytes, settings_.threads);
}

}  // namespace cocktail::cpu
