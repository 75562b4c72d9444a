#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "cocktail/backend.hpp"

namespace cocktail {

// One tensor to place: where to write its view, and its type and shape.
struct TensorRequest {
  Tensor* view = nullptr;
  ElementType type = ElementType::f32;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

// Every tensor a model needs at once (its activations, its small weights) in one buffer:
// allocates it on `backend`, each tensor at an offset aligned for any device (256 bytes, the
// largest storage-offset alignment Vulkan allows), and points every request's view into it.
std::shared_ptr<Buffer> allocate_tensors(Backend& backend, std::span<const TensorRequest> requests);

// One f32 matrix in a buffer of its own, for hosts that hand over host memory.
struct DeviceRows {
  std::shared_ptr<Buffer> memory;
  Tensor tensor;
};

// rows x cols floats of device memory; an Error naming `what` unless `host_floats` (the size of
// the host span it stands for) is exactly that.
DeviceRows device_rows(Backend& backend, std::size_t host_floats, std::int64_t rows,
                       std::int64_t cols, const char* what);
// device_rows holding a copy of `host`, enqueued on `stream`: `host` must stay unchanged until
// the stream is synchronized.
DeviceRows upload_rows(Backend& backend, Stream& stream, std::span<const float> host,
                       std::int64_t rows, std::int64_t cols, const char* what);

}  // namespace cocktail
