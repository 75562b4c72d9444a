#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <vector>

#include "cocktail/backend.hpp"
#include "cocktail/backend_provider.hpp"
#include "cocktail/options.hpp"

namespace cocktail::testing {

// The "test-counting" backend: the CPU backend's kernels behind a device memory of its own, so
// that a test can see every copy between host and device. Its buffers hold CPU buffers that
// only its own objects reach: data gets in and out through its streams' upload and download
// alone, and every other tensor is refused. Each stream counts its copies and waits, and the
// backend sums those of all its streams.

// What streams did, as counted since the last reset.
struct Counts {
  std::int64_t uploads = 0;       // host -> device
  std::int64_t downloads = 0;     // device -> host
  std::int64_t copies = 0;        // device -> device
  std::int64_t synchronizes = 0;  // waits for the queue to drain

  friend bool operator==(const Counts&, const Counts&) = default;
};

std::ostream& operator<<(std::ostream& out, const Counts& counts);

enum class StreamCall { upload, download, copy, synchronize };

// Counts of stream calls; safe to bump from the threads of several streams at once.
class CallCounter {
 public:
  void add(StreamCall call) { calls_[std::size_t(call)].fetch_add(1, std::memory_order_relaxed); }
  Counts snapshot() const;
  void reset();

 private:
  std::array<std::atomic<std::int64_t>, 4> calls_{};
};

// Device memory of the counting backend: a CPU buffer that only this backend's objects read.
class CountingBuffer final : public Buffer {
 public:
  explicit CountingBuffer(std::shared_ptr<Buffer> cpu) : cpu_(std::move(cpu)) {}
  std::size_t size() const override { return cpu_->size(); }
  Buffer& cpu() const { return *cpu_; }

 private:
  std::shared_ptr<Buffer> cpu_;
};

// The CPU tensor behind `t`: the same offset, type and shape in the CPU buffer its
// CountingBuffer holds. An Error naming `op` and `operand` when `t` is not in a CountingBuffer.
Tensor cpu_tensor(const char* op, const char* operand, const Tensor& t);

// A CPU stream that counts each call, on its own counter and on its backend's total.
class CountingStream final : public Stream {
 public:
  CountingStream(std::shared_ptr<Stream> cpu, std::shared_ptr<CallCounter> backend_total)
      : cpu_(std::move(cpu)), backend_total_(std::move(backend_total)) {}

  void upload(std::span<const std::byte> host, const Tensor& dst) override;
  void download(const Tensor& src, std::span<std::byte> host) override;
  void copy(const Tensor& src, const Tensor& dst) override;
  void synchronize() override;
  std::shared_ptr<Event> make_event() override { return cpu_->make_event(); }
  void record(Event& event) override { cpu_->record(event); }
  double seconds_between(const Event& start, const Event& end) const override {
    return cpu_->seconds_between(start, end);
  }

  Stream& cpu() const { return *cpu_; }
  Counts counts() const { return own_.snapshot(); }
  void reset_counts() { own_.reset(); }

 private:
  void count(StreamCall call);

  std::shared_ptr<Stream> cpu_;
  CallCounter own_;
  std::shared_ptr<CallCounter> backend_total_;
};

// The CPU stream behind `stream`; an Error naming `op` when another backend made it.
Stream& cpu_stream(const char* op, Stream& stream);

class CountingBackend final : public Backend {
 public:
  CountingBackend();

  std::string_view name() const override { return "test-counting"; }
  DeviceInfo device() const override;

  std::shared_ptr<Quantizer> make_quantizer(const QuantSpec& spec) override;
  std::shared_ptr<KvStore> make_kv_store(const KvStoreOptions& options) override;
  std::shared_ptr<AttentionExecutor> make_attention() override;
  std::shared_ptr<Compute> make_compute() override;
  std::shared_ptr<Buffer> allocate(std::size_t bytes) override;
  std::shared_ptr<Stream> make_stream() override;
  // Its memory stays apart from the host's: it wraps no host pointer.
  std::shared_ptr<Buffer> wrap_memory(void* memory, std::size_t bytes) override;
  std::shared_ptr<Stream> wrap_stream(void* native_stream) override;
  double measure_read_bandwidth(std::size_t bytes) override;

  // The calls of every stream this backend made, summed.
  Counts total_counts() const { return total_->snapshot(); }
  void reset_total_counts() { total_->reset(); }

 private:
  std::shared_ptr<Backend> cpu_;
  std::shared_ptr<CallCounter> total_ = std::make_shared<CallCounter>();
};

// The plugin object: one device. It scores 1, below the CPU backend, so `backend = "auto"`
// never picks it; tests name it.
class CountingBackendProvider final : public BackendProvider {
 public:
  explicit CountingBackendProvider(Options& options);

  std::string_view name() const override { return "test-counting"; }
  Availability availability() const override;
  std::vector<DeviceInfo> devices() const override;
  std::shared_ptr<Backend> make_backend(int device) override;
};

}  // namespace cocktail::testing
