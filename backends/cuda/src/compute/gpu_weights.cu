#include <algorithm>
#include <span>
#include <vector>

#include "compute/gpu_weights.hpp"
#include "runtime/gpu_check.hpp"
#include "runtime/gpu_device.hpp"

namespace cocktail::gpu {

namespace {

// Host bytes converted per copy: a large model never has a whole converted copy on the host.
constexpr std::int64_t kPieceBytes = 16 << 20;

std::size_t group_count(WeightFormat f, std::int64_t rows, std::int64_t per_row) {
  return has_groups(f) ? std::size_t(rows * per_row) : 0;
}

}  // namespace

GpuWeights::GpuWeights(const WeightView& w, int device, const GpuCompute* maker)
    : Weights(w.rows, w.cols),
      format_(device_format(w.type)),
      units_per_row_(units_per_row(format_, w.cols)),
      units_(std::size_t(w.rows * units_per_row_ * kWeightUnitBytes), device),
      groups_(group_count(format_, w.rows, units_per_row_) * sizeof(CodeGroup), device),
      maker_(maker) {
  const std::int64_t row_bytes = units_per_row_ * kWeightUnitBytes;
  const std::int64_t piece_rows = std::clamp<std::int64_t>(kPieceBytes / row_bytes, 1, w.rows);
  std::vector<std::byte> units(std::size_t(piece_rows * row_bytes));
  std::vector<CodeGroup> groups(group_count(format_, piece_rows, units_per_row_));
  use_device(device);
  for (std::int64_t first = 0; first < w.rows; first += piece_rows) {
    const std::int64_t count = std::min(piece_rows, w.rows - first);
    const std::span<std::byte> unit_span(units.data(), std::size_t(count * row_bytes));
    const std::span<CodeGroup> group_span(groups.data(),
                                          group_count(format_, count, units_per_row_));
    convert_rows(w, first, count, unit_span, group_span);
    // From pageable memory, cudaMemcpy returns once the bytes are staged, so the piece's
    // host memory may be refilled at once.
    COCKTAIL_GPU_CHECK(cudaMemcpy(units_.data() + first * row_bytes, unit_span.data(),
                                  unit_span.size_bytes(), cudaMemcpyHostToDevice));
    if (!group_span.empty()) {
      COCKTAIL_GPU_CHECK(
          cudaMemcpy(groups_.data() + std::size_t(first * units_per_row_) * sizeof(CodeGroup),
                     group_span.data(), group_span.size_bytes(), cudaMemcpyHostToDevice));
    }
  }
  // The staged copies may still be in flight, and kernels run on non-blocking streams, which do
  // not wait for the default stream the copies went to.
  COCKTAIL_GPU_CHECK(cudaStreamSynchronize(nullptr));
}

WeightRows GpuWeights::rows_view() const {
  WeightRows view;
  view.format = format_;
  view.units = units_.data();
  view.groups = has_groups(format_) ? reinterpret_cast<const CodeGroup*>(groups_.data()) : nullptr;
  view.rows = rows();
  view.cols = cols();
  view.units_per_row = units_per_row_;
  return view;
}

}  // namespace cocktail::gpu
