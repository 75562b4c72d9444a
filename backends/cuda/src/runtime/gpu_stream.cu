#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "cocktail/error.hpp"
#include "runtime/gpu_buffer.hpp"
#include "runtime/gpu_check.hpp"
#include "runtime/gpu_device.hpp"
#include "runtime/gpu_stream.hpp"

namespace cocktail::gpu {

namespace {

// A cudaEvent_t of one device, made with timing on. It lives in this file's anonymous namespace,
// so another plugin's event never passes for one of ours.
class GpuEvent final : public Event {
 public:
  explicit GpuEvent(int device) : device_(device) {
    use_device(device);
    COCKTAIL_GPU_CHECK(cudaEventCreate(&native_));
  }
  ~GpuEvent() override { (void)cudaEventDestroy(native_); }
  GpuEvent(const GpuEvent&) = delete;
  GpuEvent& operator=(const GpuEvent&) = delete;

  cudaEvent_t native() const { return native_; }
  int device() const { return device_; }

 private:
  cudaEvent_t native_ = nullptr;
  int device_;
};

template <class E>
auto& gpu_event(const char* op, E& e) {
  using Gpu = std::conditional_t<std::is_const_v<E>, const GpuEvent, GpuEvent>;
  auto* event = dynamic_cast<Gpu*>(&e);
  if (event == nullptr) throw Error(std::string(op) + ": an event of another backend");
  return *event;
}

void expect_same_size(const char* op, std::size_t host, const Tensor& t) {
  if (host != t.bytes()) {
    throw Error(std::string(op) + ": " + std::to_string(host) + " host bytes for the " +
                std::to_string(t.bytes()) + "-byte tensor " + describe(t));
  }
}

}  // namespace

GpuStream::GpuStream(int device) : device_(device) {
  use_device(device);
  // Non-blocking: the legacy default stream, which a host may use, does not serialise with it.
  COCKTAIL_GPU_CHECK(cudaStreamCreateWithFlags(&native_, cudaStreamNonBlocking));
}

GpuStream::~GpuStream() {
  // Work still queued finishes; the runtime frees the stream after it.
  if (owned_) (void)cudaStreamDestroy(native_);
}

void GpuStream::upload(std::span<const std::byte> host, const Tensor& dst) {
  std::byte* device = device_bytes("upload", "dst", dst);
  expect_same_size("upload", host.size(), dst);
  if (host.empty()) return;
  use_device(device_);
  COCKTAIL_GPU_CHECK(
      cudaMemcpyAsync(device, host.data(), host.size(), cudaMemcpyHostToDevice, native_));
}

void GpuStream::download(const Tensor& src, std::span<std::byte> host) {
  const std::byte* device = device_bytes("download", "src", src);
  expect_same_size("download", host.size(), src);
  if (host.empty()) return;
  use_device(device_);
  COCKTAIL_GPU_CHECK(
      cudaMemcpyAsync(host.data(), device, host.size(), cudaMemcpyDeviceToHost, native_));
}

void GpuStream::copy(const Tensor& src, const Tensor& dst) {
  if (src.type != dst.type || src.rows != dst.rows || src.cols != dst.cols) {
    throw Error("copy: src is " + describe(src) + " and dst " + describe(dst) +
                "; they must match");
  }
  const std::byte* from = device_bytes("copy", "src", src);
  std::byte* to = device_bytes("copy", "dst", dst);
  const std::size_t bytes = src.bytes();
  if (bytes == 0 || from == to) return;
  // The device copy engine, unlike memmove, does not promise a result for overlapping ranges.
  const auto first = reinterpret_cast<std::uintptr_t>(from);
  const auto second = reinterpret_cast<std::uintptr_t>(to);
  if (first < second + bytes && second < first + bytes) {
    throw Error("copy: src " + describe(src) + " at byte " + std::to_string(src.offset) +
                " and dst at byte " + std::to_string(dst.offset) + " overlap");
  }
  use_device(device_);
  COCKTAIL_GPU_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, native_));
}

void GpuStream::synchronize() {
  COCKTAIL_GPU_CHECK(cudaStreamSynchronize(native_));
}

std::shared_ptr<Event> GpuStream::make_event() {
  return std::make_shared<GpuEvent>(device_);
}

void GpuStream::record(Event& event) {
  GpuEvent& gpu = gpu_event("record", event);
  if (gpu.device() != device_) {
    throw Error("record: an event of device " + std::to_string(gpu.device()) +
                " on a stream of device " + std::to_string(device_));
  }
  COCKTAIL_GPU_CHECK(cudaEventRecord(gpu.native(), native_));
}

double GpuStream::seconds_between(const Event& start, const Event& end) const {
  float milliseconds = 0.0f;
  const cudaError_t status =
      cudaEventElapsedTime(&milliseconds, gpu_event("seconds_between", start).native(),
                           gpu_event("seconds_between", end).native());
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();
    throw Error("seconds_between: an event is not reached yet; synchronize() first");
  }
  COCKTAIL_GPU_CHECK(status);
  return double(milliseconds) * 1e-3;
}

cudaStream_t native_stream(const char* op, Stream& stream) {
  auto* gpu = dynamic_cast<GpuStream*>(&stream);
  if (gpu == nullptr || std::strcmp(gpu->backend_, kBackendName) != 0) {
    throw Error(std::string(op) + ": a stream of another backend; the " + kBackendName +
                " backend runs only on its own streams");
  }
  return gpu->native_;
}

}  // namespace cocktail::gpu
