#pragma once

#include <volk.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace cocktail::vulkan {

// The process's Vulkan instance. With COCKTAIL_VULKAN_VALIDATION=1 in the environment it runs
// under the Khronos validation layer (synchronization checks included) and records every
// warning and error the layer reports; the backend's operations call expect_valid(), which
// throws them as an Error, so any message fails the operation (and the test) that caused it.
class Instance {
 public:
  // The instance every provider and backend of the process shares, made at the first call
  // that succeeds and kept until the process ends, never destroyed: destroying it unloads the
  // drivers, which leaves what they leaked unreachable (lavapipe leaks a little each time, and
  // LeakSanitizer reports it), and making it again loads them again, which is slow. Nor is it
  // destroyed at exit, when the drivers' own exit handlers may already have run. Throws Error
  // when there is no loader or no Vulkan 1.1, or validation is asked for without the layer
  // installed.
  static std::shared_ptr<Instance> shared();
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  bool validation() const { return messenger_ != VK_NULL_HANDLE; }
  // Throws Error naming `where` with every message the validation layer reported since the
  // last call, which it forgets.
  void expect_valid(std::string_view where);
  // Keeps one message of the layer's (the debug messenger's callback).
  void record(std::string message);

 private:
  explicit Instance(bool validation);

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::mutex mutex_;
  std::vector<std::string> messages_;
};

}  // namespace cocktail::vulkan
