#pragma once

#include <cstddef>
#include <memory>

#include "runtime/device.hpp"

namespace cocktail::vulkan {

// Bytes per second at which `device` reads a buffer of `bytes` (read_bandwidth.comp, timed by
// the queue's timestamps): the best of a few runs.
double measure_read_bandwidth(const std::shared_ptr<const Device>& device, std::size_t bytes);

}  // namespace cocktail::vulkan
