#include <algorithm>
#include <cstdio>
#include <string>

#include "attention/gpu_attention.hpp"
#include "cocktail/error.hpp"
#include "compute/gpu_compute.hpp"
#include "gpu_backend.hpp"
#include "gpu_targets.hpp"
#include "kv/gpu_kv_store.hpp"
#include "quant/gpu_quantizer.hpp"
#include "runtime/bandwidth.hpp"
#include "runtime/bandwidth_kernels.hpp"
#include "runtime/gpu_arch.hpp"
#include "runtime/gpu_buffer.hpp"
#include "runtime/gpu_check.hpp"
#include "runtime/gpu_stream.hpp"

namespace cocktail::gpu {

namespace {

// Above the CPU backend's 10: a GPU that can run wins `backend = "auto"`.
constexpr int kGpuScore = 100;

// The targets this build compiled device code for, comma-separated ("sm_80,sm_90a").
constexpr const char* kBuiltTargets = COCKTAIL_GPU_TARGETS;

std::string version_text(int version) {
#if defined(COCKTAIL_GPU_HIP)
  return std::to_string(version / 10000000) + "." + std::to_string(version / 100000 % 100);
#else
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
#endif
}

int runtime_version() {
#if defined(COCKTAIL_GPU_HIP)
  return HIP_VERSION;
#else
  return CUDART_VERSION;
#endif
}

// Why the runtime lists no device: no driver, a driver too old, or no GPU.
std::string no_device_reason(cudaError_t status) {
  const std::string call =
      std::string(kBackendName) + "GetDeviceCount: " + cudaGetErrorString(status);
  if (status == cudaErrorNoDevice) {
    return std::string("no ") + kRuntimeName + " device (" + call + ")";
  }
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
    (void)cudaGetLastError();
    return std::string("no ") + kRuntimeName + " driver (" + call + ")";
  }
  if (status == cudaErrorInsufficientDriver) {
    return std::string("the ") + kRuntimeName + " driver (" + version_text(driver) +
           ") is older than this build's runtime (" + version_text(runtime_version()) + ") (" +
           call + ")";
  }
  return std::string(kRuntimeName) + " cannot start (" + call + ")";
}

std::string no_code_reason(const std::string& arch) {
  return "no code for " + arch + " in this build (built for " + describe_targets(kBuiltTargets) +
         ")";
}

Availability availability_of(const GpuDevice& device) {
  if (!has_code_for(kBuiltTargets, device.arch)) return {0, no_code_reason(device.arch)};
  return {kGpuScore, device.arch + ", " + std::to_string(device.multiprocessors) +
                         " multiprocessors, " + std::to_string(device.l2_bytes >> 20) +
                         " MiB L2; this build has code for " + describe_targets(kBuiltTargets)};
}

DeviceInfo info_of(const GpuDevice& device) {
  return {device.name, device.memory_bytes, availability_of(device)};
}

// A device the runtime cannot describe is listed with the runtime's reason, so the others stay
// usable.
DeviceInfo probe_device(int index) {
  try {
    return info_of(read_device(index));
  } catch (const Error& e) {
    return {"device " + std::to_string(index), 0, {0, e.what()}};
  }
}

std::string address(const void* pointer) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", pointer);
  return text;
}

// The runtime's own word, for the device make_backend is about to run on: an image this build
// lacks shows here even where the arch rules said otherwise.
void expect_kernel_image(const GpuDevice& device) {
  const cudaError_t status = probe_kernel_image();
  if (status == cudaErrorNoKernelImageForDevice || status == cudaErrorInvalidDeviceFunction) {
    throw Error(std::string("backend '") + kBackendName + "' cannot run on device " +
                std::to_string(device.index) + " (" + device.name +
                "): " + no_code_reason(device.arch) + ": " + cudaGetErrorString(status));
  }
  COCKTAIL_GPU_CHECK(status);
}

}  // namespace

// [backend.cuda] (or [backend.hip]) has no keys: Options::finish() refuses any it holds.
GpuBackendProvider::GpuBackendProvider(Options& /*options*/) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    no_device_ = no_device_reason(status);
    return;
  }
  if (count == 0) no_device_ = std::string("no ") + kRuntimeName + " device";
  for (int i = 0; i < count; ++i) devices_.push_back(probe_device(i));
}

Availability GpuBackendProvider::availability() const {
  if (devices_.empty()) return {0, no_device_};
  const auto best = std::max_element(devices_.begin(), devices_.end(),
                                     [](const DeviceInfo& a, const DeviceInfo& b) {
                                       return a.availability.score < b.availability.score;
                                     });
  const auto index = std::to_string(best - devices_.begin());
  return {best->availability.score,
          best->name + " (device " + index + "): " + best->availability.reason};
}

std::vector<DeviceInfo> GpuBackendProvider::devices() const {
  return devices_;
}

std::shared_ptr<Backend> GpuBackendProvider::make_backend(int device) {
  const std::string backend = std::string("backend '") + kBackendName + "'";
  if (devices_.empty()) throw Error(backend + " cannot run here: " + no_device_);
  if (device < 0 || device >= int(devices_.size())) {
    throw Error(backend + " has " + std::to_string(devices_.size()) +
                " device(s); there is no device " + std::to_string(device));
  }
  const DeviceInfo& info = devices_[std::size_t(device)];
  if (info.availability.score <= 0) {
    throw Error(backend + " cannot run on device " + std::to_string(device) + " (" + info.name +
                "): " + info.availability.reason);
  }
  GpuDevice gpu = read_device(device);
  use_device(gpu);
  expect_kernel_image(gpu);
  return std::make_shared<GpuBackend>(std::move(gpu));
}

GpuBackend::GpuBackend(GpuDevice device)
    : device_(std::make_shared<const GpuDevice>(std::move(device))) {}

DeviceInfo GpuBackend::device() const {
  return info_of(*device_);
}

std::shared_ptr<Quantizer> GpuBackend::make_quantizer(const QuantSpec& spec) {
  use_device(*device_);
  return std::make_shared<GpuQuantizer>(device_, spec);
}

std::shared_ptr<KvStore> GpuBackend::make_kv_store(const KvStoreOptions& options) {
  use_device(*device_);
  return std::make_shared<GpuKvStore>(device_, options);
}

std::shared_ptr<AttentionExecutor> GpuBackend::make_attention() {
  use_device(*device_);
  return std::make_shared<GpuAttention>(device_);
}

std::shared_ptr<Compute> GpuBackend::make_compute() {
  use_device(*device_);
  return std::make_shared<GpuCompute>(device_);
}

std::shared_ptr<Buffer> GpuBackend::allocate(std::size_t bytes) {
  return std::make_shared<GpuBuffer>(bytes, device_->index);
}

std::shared_ptr<Stream> GpuBackend::make_stream() {
  return std::make_shared<GpuStream>(device_->index);
}

std::shared_ptr<Buffer> GpuBackend::wrap_memory(void* memory, std::size_t bytes) {
  const std::string op = std::string(kBackendName) + " backend: wrap_memory of " +
                         std::to_string(bytes) + " bytes at " + address(memory);
  if (memory == nullptr) {
    if (bytes > 0) throw Error(op + ": null");
    return std::make_shared<GpuBuffer>(nullptr, 0, device_->index);
  }
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, memory);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(op + ": not memory the " + kRuntimeName + " runtime knows (" +
                cudaGetErrorString(status) + ")");
  }
  if (attributes.type != cudaMemoryTypeDevice) {
    throw Error(op + ": not device memory (host, managed or unregistered memory)");
  }
  if (attributes.device != device_->index) {
    throw Error(op + ": memory of device " + std::to_string(attributes.device) +
                ", not of device " + std::to_string(device_->index) + " (" + device_->name +
                ") that this backend runs on");
  }
  return std::make_shared<GpuBuffer>(memory, bytes, device_->index);
}

std::shared_ptr<Stream> GpuBackend::wrap_stream(void* native_stream) {
  // Null is the legacy default stream, a host's stream like any other. A query that a capturing
  // stream allows (cudaStreamQuery would end the host's graph capture) tells a handle from junk.
  const auto stream = static_cast<cudaStream_t>(native_stream);
  use_device(*device_);
  unsigned flags = 0;
  const cudaError_t status = cudaStreamGetFlags(stream, &flags);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(std::string(kBackendName) + " backend: wrap_stream of " + address(native_stream) +
                ": not a " + kRuntimeName + " stream (" + cudaGetErrorString(status) + ")");
  }
  return std::make_shared<GpuStream>(stream, device_->index);
}

double GpuBackend::measure_read_bandwidth(std::size_t bytes) {
  return gpu::measure_read_bandwidth(*device_, bytes);
}

}  // namespace cocktail::gpu
