#pragma once

#include <cstddef>

namespace cocktail {

// A block of memory a backend allocated on its device (Backend::allocate); plain host memory
// on the CPU backend. Only the backend that made it reads or writes it, through the Tensor
// views that interfaces pass, and through its streams' explicit copies to and from the host.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual std::size_t size() const = 0;  // bytes
};

}  // namespace cocktail
