#pragma once

#include <cstdint>

#include "cocktail/compute.hpp"
#include "gpu_common/weight_layout.hpp"
#include "runtime/gpu_buffer.hpp"

namespace cocktail::gpu {

class GpuCompute;

// A weight matrix on the device in the layout of gpu_common/weight_layout.hpp: its units and, for
// codes, their groups, each in a buffer of its own.
class GpuWeights final : public Weights {
 public:
  // Converts `w` (checked by the caller) row by row, a few MiB at a time, and copies it to
  // `device`; returns once the copies are done, so `w`'s bytes may go.
  GpuWeights(const WeightView& w, int device, const GpuCompute* maker);

  // What the kernels read.
  WeightRows rows_view() const;
  const GpuCompute* maker() const { return maker_; }

 private:
  WeightFormat format_;
  std::int64_t units_per_row_;
  GpuBuffer units_;
  GpuBuffer groups_;  // empty for the float formats
  const GpuCompute* maker_;
};

}  // namespace cocktail::gpu
