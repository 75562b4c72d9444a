#pragma once

#include <memory>
#include <span>

#include "cocktail/stream.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

// A CUDA (HIP) stream of one device: its own, made non-blocking, or a host's
// (Backend::wrap_stream), which it does not destroy. Copies are cudaMemcpyAsync on it; an event
// is a cudaEvent_t.
class GpuStream final : public Stream {
 public:
  explicit GpuStream(int device);
  GpuStream(cudaStream_t native, int device) : native_(native), device_(device), owned_(false) {}
  ~GpuStream() override;
  GpuStream(const GpuStream&) = delete;
  GpuStream& operator=(const GpuStream&) = delete;

  void upload(std::span<const std::byte> host, const Tensor& dst) override;
  void download(const Tensor& src, std::span<std::byte> host) override;
  void copy(const Tensor& src, const Tensor& dst) override;
  void synchronize() override;
  std::shared_ptr<Event> make_event() override;
  void record(Event& event) override;
  double seconds_between(const Event& start, const Event& end) const override;

  cudaStream_t native() const { return native_; }
  int device() const { return device_; }

 private:
  friend cudaStream_t native_stream(const char* op, Stream& stream);

  cudaStream_t native_ = nullptr;
  int device_;
  bool owned_ = true;
  // Which plugin made it (GpuBuffer says why).
  const char* backend_ = kBackendName;
};

// The native stream behind `stream`, for launching kernels on it. An Error naming `op` when the
// stream is another backend's.
cudaStream_t native_stream(const char* op, Stream& stream);

}  // namespace cocktail::gpu
