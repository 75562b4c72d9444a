#pragma once

#include <volk.h>

#include <string>
#include <string_view>

namespace cocktail::vulkan {

// The name of a result code ("VK_ERROR_OUT_OF_DEVICE_MEMORY"), or its number when unlisted.
std::string result_name(VkResult result);

// Throws Error "vulkan backend: <what> failed with <result name>" unless `result` is VK_SUCCESS.
void check(VkResult result, std::string_view what);

}  // namespace cocktail::vulkan
