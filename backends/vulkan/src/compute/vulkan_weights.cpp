#include "compute/vulkan_weights.hpp"

#include <algorithm>
#include <span>
#include <string>

#include "cocktail/compute_checks.hpp"
#include "cocktail/error.hpp"
#include "memory/vulkan_stream.hpp"

namespace cocktail::vulkan {

std::unique_ptr<VulkanWeights> upload_weights(const std::shared_ptr<const Device>& device,
                                              const WeightView& w, std::int64_t max_slab_rows,
                                              const void* maker) {
  check_weight_view("upload", w);
  const gpu::WeightFormat format = gpu::device_format(w.type);
  const std::int64_t per_row = gpu::units_per_row(format, w.cols);
  const std::int64_t unit_bytes =
      gpu::kWeightUnitBytes + (gpu::has_groups(format) ? std::int64_t(sizeof(gpu::CodeGroup)) : 0);
  const std::int64_t row_bytes = per_row * unit_bytes;
  const auto fit = std::int64_t(device->limits().max_storage_range) / row_bytes;
  if (fit == 0) {
    throw Error("upload: a row of " + std::to_string(w.cols) + " " +
                std::string(to_string(w.type)) + " weights takes " + std::to_string(row_bytes) +
                " bytes on the device, more than one storage binding of " + device->name() +
                " covers (maxStorageBufferRange, " +
                std::to_string(device->limits().max_storage_range) + " bytes)");
  }
  const std::int64_t slab_rows = std::min(fit, max_slab_rows);
  std::vector<VulkanWeights::Slab> slabs;
  std::vector<std::byte> units;
  std::vector<gpu::CodeGroup> groups;
  VulkanStream stream(device);
  for (std::int64_t first = 0; first < w.rows; first += slab_rows) {
    const std::int64_t count = std::min(slab_rows, w.rows - first);
    const std::int64_t unit_count = count * per_row;
    units.resize(std::size_t(unit_count * gpu::kWeightUnitBytes));
    groups.resize(gpu::has_groups(format) ? std::size_t(unit_count) : 0);
    gpu::convert_rows(w, first, count, units, groups);
    auto memory = std::make_unique<VulkanBuffer>(device, std::size_t(count * row_bytes));
    // As f32 words: 4 a unit, 2 a group.
    stream.upload(std::as_bytes(std::span(units)),
                  Tensor{memory.get(), 0, ElementType::f32, unit_count, 4});
    if (!groups.empty()) {
      stream.upload(std::as_bytes(std::span(groups)),
                    Tensor{memory.get(), units.size(), ElementType::f32, unit_count, 2});
    }
    stream.synchronize();  // one slab's staging memory at a time
    slabs.push_back({first, count, std::move(memory)});
  }
  return std::make_unique<VulkanWeights>(w.rows, w.cols, format, std::move(slabs), maker);
}

}  // namespace cocktail::vulkan
