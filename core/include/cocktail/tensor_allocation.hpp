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

}  // namespace cocktail
