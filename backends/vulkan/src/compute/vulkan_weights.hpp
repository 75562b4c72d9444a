#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cocktail/compute.hpp"
#include "gpu_common/weight_layout.hpp"
#include "memory/vulkan_buffer.hpp"
#include "runtime/device.hpp"

namespace cocktail::vulkan {

// A weight matrix as the matmul and embedding kernels read it (shaders/weight_rows.glsl): in the
// GPU backends' shared layout (gpu_common/weight_layout.hpp), which keeps the file's values
// exactly, in slabs of rows that each fit one storage binding (maxStorageBufferRange) and one
// dispatch. A slab's binding holds its rows' 16-byte units, then, for the codes formats, their
// groups (a scale and an offset per unit, two to 16 bytes).
class VulkanWeights final : public Weights {
 public:
  struct Slab {
    std::int64_t first_row = 0;
    std::int64_t rows = 0;
    std::unique_ptr<VulkanBuffer> memory;
  };

  VulkanWeights(std::int64_t rows, std::int64_t cols, gpu::WeightFormat format,
                std::vector<Slab> slabs, const void* maker)
      : Weights(rows, cols), format_(format), slabs_(std::move(slabs)), maker_(maker) {}

  gpu::WeightFormat format() const { return format_; }
  std::uint32_t units_per_row() const { return std::uint32_t(gpu::units_per_row(format_, cols())); }
  const std::vector<Slab>& slabs() const { return slabs_; }
  // The bytes of a slab, the range its binding covers.
  BufferRange range(const Slab& slab) const {
    const Allocation& memory = slab.memory->allocation();
    return {memory.buffer, memory.offset, slab.memory->size()};
  }
  // Where a slab's groups begin in its binding, in 16-byte units: after its rows' units.
  std::uint32_t groups_first(const Slab& slab) const {
    return std::uint32_t(slab.rows) * units_per_row();
  }
  // The Compute that uploaded it.
  const void* maker() const { return maker_; }

 private:
  gpu::WeightFormat format_;
  std::vector<Slab> slabs_;
  const void* maker_;
};

// `w` converted on the host (gpu::convert_rows) and copied to `device` in slabs of at most
// `max_slab_rows` rows; returns once the copies are done. An Error names the operation
// ("upload") and what was wrong: empty weights, rows that are not whole blocks, a type with no
// device format, or a row larger than one storage binding.
std::unique_ptr<VulkanWeights> upload_weights(const std::shared_ptr<const Device>& device,
                                              const WeightView& w, std::int64_t max_slab_rows,
                                              const void* maker);

}  // namespace cocktail::vulkan
