#include "datasheet.hpp"

#include <array>

namespace cocktail::cli {
namespace {

struct DatasheetEntry {
  std::string_view name;  // as cudaGetDeviceProperties names the device
  double bytes_per_second;
};

// NVIDIA's data sheets: H100 SXM5 3.35 TB/s, H100 PCIe 2 TB/s, H100 NVL 3.9 TB/s, H200
// 4.8 TB/s, A100 80GB SXM 2.039 TB/s, A100 40GB SXM 1.555 TB/s, A100 80GB PCIe 1.935 TB/s.
constexpr std::array kDatasheets = {
    DatasheetEntry{"NVIDIA H100 80GB HBM3", 3.35e12},
    DatasheetEntry{"NVIDIA H100 PCIe", 2.0e12},
    DatasheetEntry{"NVIDIA H100 NVL", 3.9e12},
    DatasheetEntry{"NVIDIA H200", 4.8e12},
    DatasheetEntry{"NVIDIA A100-SXM4-80GB", 2.039e12},
    DatasheetEntry{"NVIDIA A100-SXM4-40GB", 1.555e12},
    DatasheetEntry{"NVIDIA A100 80GB PCIe", 1.935e12},
};

}  // namespace

std::optional<double> datasheet_read_bandwidth(std::string_view device_name) {
  for (const DatasheetEntry& entry : kDatasheets) {
    if (device_name == entry.name) return entry.bytes_per_second;
  }
  return std::nullopt;
}

}  // namespace cocktail::cli
