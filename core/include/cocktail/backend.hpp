#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/attention_executor.hpp"
#include "cocktail/buffer.hpp"
#include "cocktail/compute.hpp"
#include "cocktail/kv_store.hpp"
#include "cocktail/quantizer.hpp"
#include "cocktail/stream.hpp"

namespace cocktail {

struct DeviceInfo {
  std::string name;
  std::size_t memory_bytes = 0;
};

// How well a backend can run on this machine: score 0 means it cannot, and `reason` says why.
// `backend = "auto"` picks the highest score.
struct Availability {
  int score = 0;
  std::string reason;
};

// A compute device family (CPU, CUDA, ...). Makes the objects that hold and read K/V and run
// models; owns device memory. Objects it makes keep its plugin library loaded for as long as
// they live.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual Availability availability() const = 0;
  virtual std::vector<DeviceInfo> devices() const = 0;

  virtual std::shared_ptr<Quantizer> make_quantizer(const QuantSpec& spec) = 0;
  virtual std::shared_ptr<KvStore> make_kv_store(const KvStoreOptions& options) = 0;
  virtual std::shared_ptr<AttentionExecutor> make_attention() = 0;
  virtual std::shared_ptr<Compute> make_compute() = 0;

  // `bytes` bytes of device memory, uninitialised. Running out is an Error naming the size and
  // the device, never a crash.
  virtual std::shared_ptr<Buffer> allocate(std::size_t bytes) = 0;
  // A new queue of work on the device: one per sequence (or thread) that runs work at once.
  virtual std::shared_ptr<Stream> make_stream() = 0;

  // Measures, now, how fast this backend's device reads a buffer of `bytes` (bytes per
  // second). Benchmarks compare attention against it at the cache's own working-set size,
  // since caches make small buffers read faster than large ones.
  virtual double measure_read_bandwidth(std::size_t bytes) = 0;
};

}  // namespace cocktail
