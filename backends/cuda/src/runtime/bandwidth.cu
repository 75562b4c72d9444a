#include <algorithm>
#include <vector>

#include "runtime/bandwidth.hpp"
#include "runtime/bandwidth_kernels.hpp"
#include "runtime/gpu_buffer.hpp"
#include "runtime/gpu_check.hpp"
#include "runtime/gpu_stream.hpp"

namespace cocktail::gpu {

namespace {

constexpr int kWarmUps = 2;
constexpr int kTimedRuns = 9;

}  // namespace

double measure_read_bandwidth(const GpuDevice& device, std::size_t bytes) {
  use_device(device);
  const std::size_t size = std::max<std::size_t>((bytes + 15) / 16 * 16, 16);
  const GpuBuffer data(size, device.index);
  const GpuBuffer sink(sizeof(unsigned), device.index);
  GpuStream stream(device.index);
  // Zeros: their checksum is 0, never the 1 that would make the kernel write.
  COCKTAIL_GPU_CHECK(cudaMemsetAsync(data.data(), 0, size, stream.native()));
  const int blocks = device.multiprocessors * std::max(read_all_blocks_per_multiprocessor(), 1);
  const auto read = [&] {
    launch_read_all(data.data(), size, 1u, reinterpret_cast<unsigned*>(sink.data()), blocks,
                    stream.native());
  };
  for (int i = 0; i < kWarmUps; ++i) read();
  const std::shared_ptr<Event> start = stream.make_event();
  const std::shared_ptr<Event> end = stream.make_event();
  std::vector<double> seconds;
  for (int i = 0; i < kTimedRuns; ++i) {
    stream.record(*start);
    read();
    stream.record(*end);
    stream.synchronize();
    seconds.push_back(stream.seconds_between(*start, *end));
  }
  std::nth_element(seconds.begin(), seconds.begin() + kTimedRuns / 2, seconds.end());
  return double(size) / seconds[kTimedRuns / 2];
}

}  // namespace cocktail::gpu
