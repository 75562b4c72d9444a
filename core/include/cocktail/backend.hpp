#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/attention_executor.hpp"
#include "cocktail/buffer.hpp"
#include "cocktail/compute.hpp"
#include "cocktail/device.hpp"
#include "cocktail/kv_store.hpp"
#include "cocktail/quantizer.hpp"
#include "cocktail/stream.hpp"

namespace cocktail {

// A compute backend (CPU, CUDA, ...) on one device, made by its BackendProvider. Makes the
// objects that hold and read K/V and run models; owns the device's memory. Objects it makes
// keep its plugin library loaded for as long as they live.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // The device it runs on (its availability says how: "SIMD target AVX3_DL", ...).
  virtual DeviceInfo device() const = 0;

  virtual std::shared_ptr<Quantizer> make_quantizer(const QuantSpec& spec) = 0;
  virtual std::shared_ptr<KvStore> make_kv_store(const KvStoreOptions& options) = 0;
  virtual std::shared_ptr<AttentionExecutor> make_attention() = 0;
  virtual std::shared_ptr<Compute> make_compute() = 0;

  // `bytes` bytes of device memory, uninitialised. Running out is an Error naming the size and
  // the device, never a crash.
  virtual std::shared_ptr<Buffer> allocate(std::size_t bytes) = 0;
  // A new queue of work on the device: one per sequence (or thread) that runs work at once.
  virtual std::shared_ptr<Stream> make_stream() = 0;

  // For a host that runs its own transformer on this device: its own memory and its own queue,
  // wrapped without a copy. `memory` is a pointer into the device's memory as the host's
  // runtime gives it (a CUDA device pointer; plain host memory on the CPU backend) of `bytes`
  // bytes, which the host keeps alive and does not free while a view of the buffer is in use.
  // `native_stream` is the runtime's queue (a cudaStream_t; null on the CPU backend, whose work
  // runs in the calling thread), so Cocktail's work runs in order with the host's. An Error
  // names what this backend cannot wrap.
  virtual std::shared_ptr<Buffer> wrap_memory(void* memory, std::size_t bytes) = 0;
  virtual std::shared_ptr<Stream> wrap_stream(void* native_stream) = 0;

  // Measures, now, how fast this backend's device reads a buffer of `bytes` (bytes per
  // second). Benchmarks compare attention against it at the cache's own working-set size,
  // since caches make small buffers read faster than large ones.
  virtual double measure_read_bandwidth(std::size_t bytes) = 0;
};

}  // namespace cocktail
