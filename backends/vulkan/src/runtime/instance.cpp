#include "runtime/instance.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "cocktail/error.hpp"
#include "runtime/loader.hpp"
#include "runtime/vk_check.hpp"

namespace cocktail::vulkan {

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

// COCKTAIL_VULKAN_VALIDATION: 1 turns the validation layer on; 0 or unset leaves it off.
bool validation_requested() {
  const char* value = std::getenv("COCKTAIL_VULKAN_VALIDATION");
  if (value == nullptr || std::strcmp(value, "") == 0 || std::strcmp(value, "0") == 0) {
    return false;
  }
  if (std::strcmp(value, "1") == 0) return true;
  throw Error(std::string("vulkan backend: COCKTAIL_VULKAN_VALIDATION is '") + value +
              "'; set it to 1 (validation layer on) or 0 (off)");
}

void expect_validation_layer() {
  std::uint32_t count = 0;
  check(vkEnumerateInstanceLayerProperties(&count, nullptr), "vkEnumerateInstanceLayerProperties");
  std::vector<VkLayerProperties> layers(count);
  check(vkEnumerateInstanceLayerProperties(&count, layers.data()),
        "vkEnumerateInstanceLayerProperties");
  const bool found = std::any_of(layers.begin(), layers.end(), [](const VkLayerProperties& l) {
    return std::strcmp(l.layerName, kValidationLayer) == 0;
  });
  if (!found) {
    throw Error(std::string("vulkan backend: COCKTAIL_VULKAN_VALIDATION=1 asks for ") +
                kValidationLayer + ", which is not installed (Debian: vulkan-validationlayers)");
  }
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT /*types*/,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data,
                                          void* instance) {
  const char* level =
      severity == VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning";
  static_cast<Instance*>(instance)->record(std::string(level) + ": " +
                                           (data->pMessage ? data->pMessage : "(no text)"));
  return VK_FALSE;  // the call goes on; the operation fails at its next expect_valid()
}

}  // namespace

std::shared_ptr<Instance> Instance::shared() {
  static std::mutex mutex;
  // Deliberately never destroyed (the class comment says why): a reference to an object made
  // once, which no exit handler tears down.
  static std::shared_ptr<Instance>& kept = *new std::shared_ptr<Instance>();
  const std::lock_guard lock(mutex);
  if (!kept) {
    open_loader();
    kept.reset(new Instance(validation_requested()));
  }
  return kept;
}

Instance::Instance(bool validation) {
  std::uint32_t version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion != nullptr) {
    check(vkEnumerateInstanceVersion(&version), "vkEnumerateInstanceVersion");
  }
  if (version < VK_API_VERSION_1_1) {
    throw Error("vulkan backend: the Vulkan loader offers Vulkan " +
                std::to_string(VK_API_VERSION_MAJOR(version)) + "." +
                std::to_string(VK_API_VERSION_MINOR(version)) + "; the backend needs 1.1");
  }
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "cocktail";
  app.pEngineName = "cocktail";
  app.apiVersion = VK_API_VERSION_1_1;

  VkDebugUtilsMessengerCreateInfoEXT messenger{};
  messenger.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger.pfnUserCallback = on_message;
  messenger.pUserData = this;
  // Core validation misses a missing barrier between two kernels; synchronization validation
  // finds it.
  const VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{};
  features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
  features.pNext = &messenger;  // also reports what instance creation and destruction find
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;

  const char* layers[] = {kValidationLayer};
  const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                              VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pApplicationInfo = &app;
  if (validation) {
    expect_validation_layer();
    info.pNext = &features;
    info.enabledLayerCount = 1;
    info.ppEnabledLayerNames = layers;
    info.enabledExtensionCount = 2;
    info.ppEnabledExtensionNames = extensions;
  }
  check(vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");
  volkLoadInstanceOnly(instance_);
  if (validation) {
    const VkResult made =
        vkCreateDebugUtilsMessengerEXT(instance_, &messenger, nullptr, &messenger_);
    if (made != VK_SUCCESS) {
      vkDestroyInstance(instance_, nullptr);
      check(made, "vkCreateDebugUtilsMessengerEXT");
    }
  }
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  vkDestroyInstance(instance_, nullptr);
}

void Instance::record(std::string message) {
  const std::lock_guard lock(mutex_);
  messages_.push_back(std::move(message));
}

void Instance::expect_valid(std::string_view where) {
  std::vector<std::string> found;
  {
    const std::lock_guard lock(mutex_);
    found.swap(messages_);
  }
  if (found.empty()) return;
  std::string text = "vulkan backend: the validation layer reported " +
                     std::to_string(found.size()) + " message(s) by " + std::string(where) + ":";
  for (const std::string& message : found) text += "\n  " + message;
  throw Error(text);
}

}  // namespace cocktail::vulkan
