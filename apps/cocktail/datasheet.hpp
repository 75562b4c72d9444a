#pragma once

#include <optional>
#include <string_view>

namespace cocktail::cli {

// The memory bandwidth (bytes per second) that the vendor's data sheet gives for a device, by
// the name its runtime reports ("NVIDIA H100 80GB HBM3"); none for devices not listed. Benchmarks
// report their speed against it beside the bandwidth they measure.
std::optional<double> datasheet_read_bandwidth(std::string_view device_name);

}  // namespace cocktail::cli
