#pragma once

// The Vulkan backend's tests reach its runtime through the internal library (as the CPU tests
// reach the CPU kernels), on the first device of this machine that runs it.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cocktail/tensor_allocation.hpp"
#include "memory/vulkan_stream.hpp"
#include "vulkan_backend.hpp"

namespace cocktail::vulkan::testing {

// The backend, made by its provider with [backend.vulkan] push_descriptors as given, or null
// with the reason in `why_not`.
std::shared_ptr<VulkanBackend> make_vulkan_backend(bool push_descriptors, std::string& why_not);

// Each test gets a backend and a stream of its own. Where no device runs Vulkan the test is
// skipped with the reason, unless COCKTAIL_REQUIRE_VULKAN=1 (set by CI, which installs
// lavapipe) says it must run: then it fails.
class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override { SetUpWith(true); }
  void SetUpWith(bool push_descriptors);

  VulkanBackend& backend() const { return *backend_; }
  const Device& device() const { return *backend_->vulkan_device(); }
  VulkanStream& stream() const { return *stream_; }

  // An f32 device copy of `host` (waited for).
  DeviceRows to_device(std::span<const float> host, std::int64_t rows, std::int64_t cols) const;
  // Waits for the stream's work, then copies `t` to the host.
  std::vector<float> read_back(const Tensor& t) const;

 private:
  std::shared_ptr<VulkanBackend> backend_;
  std::shared_ptr<VulkanStream> stream_;
};

}  // namespace cocktail::vulkan::testing
