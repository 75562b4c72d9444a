#include "vulkan_fixture.hpp"

#include <cstdlib>
#include <cstring>

#include "cocktail/backend_provider.hpp"
#include "cocktail/options.hpp"

namespace cocktail::vulkan::testing {

std::shared_ptr<VulkanBackend> make_vulkan_backend(bool push_descriptors, std::string& why_not) {
  Options options("backend.vulkan", {"vulkan test", 0});
  options.set("push_descriptors", push_descriptors, {"vulkan test", 0});
  VulkanBackendProvider provider(options);
  const Availability availability = provider.availability();
  if (availability.score <= 0) {
    why_not = availability.reason;
    return nullptr;
  }
  const int device = pick_device(provider.devices(), "", "vulkan");
  return std::static_pointer_cast<VulkanBackend>(provider.make_backend(device));
}

void VulkanTest::SetUpWith(bool push_descriptors) {
  std::string why_not;
  backend_ = make_vulkan_backend(push_descriptors, why_not);
  if (!backend_) {
    const char* required = std::getenv("COCKTAIL_REQUIRE_VULKAN");
    if (required != nullptr && std::strcmp(required, "1") == 0) {
      FAIL() << "COCKTAIL_REQUIRE_VULKAN=1, but the Vulkan backend cannot run: " << why_not;
    }
    GTEST_SKIP() << why_not;
  }
  stream_ = std::static_pointer_cast<VulkanStream>(backend_->make_stream());
}

DeviceRows VulkanTest::to_device(std::span<const float> host, std::int64_t rows,
                                 std::int64_t cols) const {
  DeviceRows out = upload_rows(*backend_, *stream_, host, rows, cols, "test input");
  stream_->synchronize();
  return out;
}

std::vector<float> VulkanTest::read_back(const Tensor& t) const {
  std::vector<float> host(std::size_t(t.elements()));
  download(*stream_, t, std::span<float>(host));
  stream_->synchronize();
  return host;
}

}  // namespace cocktail::vulkan::testing
