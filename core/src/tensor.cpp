#include "cocktail/tensor.hpp"

#include <fmt/format.h>

#include "cocktail/error.hpp"
#include "cocktail/tensor_allocation.hpp"

namespace cocktail {

namespace {

constexpr std::size_t kDeviceAlignment = 256;

std::size_t aligned(std::size_t n) {
  return (n + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment;
}

}  // namespace

Tensor Tensor::row_range(std::int64_t first, std::int64_t count) const {
  if (first < 0 || count < 0 || first + count > rows) {
    throw Error(fmt::format("rows [{}, {}) are outside the tensor {}", first, first + count,
                            describe(*this)));
  }
  Tensor part = *this;
  part.offset += std::size_t(first * cols) * element_bytes(type);
  part.rows = count;
  return part;
}

std::string describe(const Tensor& t) {
  return fmt::format("{} [{} x {}]", to_string(t.type), t.rows, t.cols);
}

void expect_tensor(const char* op, const char* operand, const Tensor& t, ElementType type,
                   std::int64_t rows, std::int64_t cols) {
  if (t.buffer == nullptr) throw Error(fmt::format("{}: {} is an empty view", op, operand));
  if (t.type != type || t.rows != rows || t.cols != cols) {
    throw Error(fmt::format("{}: {} is {}; expected {} [{} x {}]", op, operand, describe(t),
                            to_string(type), rows, cols));
  }
}

void expect_inside_buffer(const char* op, const char* operand, const Tensor& t,
                          std::size_t buffer_bytes) {
  if (t.rows < 0 || t.cols < 0 || t.offset > buffer_bytes || t.bytes() > buffer_bytes - t.offset) {
    throw Error(fmt::format("{}: {} ({} at byte {}) runs past the end of its {}-byte buffer", op,
                            operand, describe(t), t.offset, buffer_bytes));
  }
  if (t.offset % element_bytes(t.type) != 0) {
    throw Error(fmt::format("{}: {} ({}) starts at byte {}, not a whole element", op, operand,
                            describe(t), t.offset));
  }
}

std::shared_ptr<Buffer> allocate_tensors(Backend& backend,
                                         std::span<const TensorRequest> requests) {
  std::size_t total = 0;
  for (const TensorRequest& r : requests) {
    if (r.rows < 0 || r.cols < 0) {
      throw Error(fmt::format("allocate_tensors: negative shape [{} x {}]", r.rows, r.cols));
    }
    total = aligned(total) + std::size_t(r.rows * r.cols) * element_bytes(r.type);
  }
  std::shared_ptr<Buffer> buffer = backend.allocate(std::max<std::size_t>(total, 1));
  std::size_t offset = 0;
  for (const TensorRequest& r : requests) {
    offset = aligned(offset);
    *r.view = Tensor{buffer.get(), offset, r.type, r.rows, r.cols};
    offset += r.view->bytes();
  }
  return buffer;
}

DeviceRows device_rows(Backend& backend, std::size_t host_floats, std::int64_t rows,
                       std::int64_t cols, const char* what) {
  if (rows < 0 || cols < 0 || host_floats != std::size_t(rows * cols)) {
    throw Error(fmt::format("{}: {} floats for {} rows of {}", what, host_floats, rows, cols));
  }
  DeviceRows out;
  const TensorRequest request{&out.tensor, ElementType::f32, rows, cols};
  out.memory = allocate_tensors(backend, std::span(&request, 1));
  return out;
}

DeviceRows upload_rows(Backend& backend, Stream& stream, std::span<const float> host,
                       std::int64_t rows, std::int64_t cols, const char* what) {
  DeviceRows out = device_rows(backend, host.size(), rows, cols, what);
  upload(stream, host, out.tensor);
  return out;
}

}  // namespace cocktail
