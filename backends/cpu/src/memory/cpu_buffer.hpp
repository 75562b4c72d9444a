#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>

#include "cocktail/buffer.hpp"
#include "cocktail/tensor.hpp"

namespace cocktail::cpu {

// The CPU backend's device memory: host memory, its own (aligned to a cache line) or a host's
// (Backend::wrap_memory), which it does not free.
class CpuBuffer final : public Buffer {
 public:
  // Throws Error naming the size when the memory is not there.
  explicit CpuBuffer(std::size_t bytes);
  // A view of memory the host owns.
  CpuBuffer(std::byte* memory, std::size_t bytes) : size_(bytes), data_(memory) {}

  std::size_t size() const override { return size_; }
  std::byte* data() const { return data_; }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::size_t size_;
  std::unique_ptr<std::byte, Free> owned_;
  std::byte* data_ = nullptr;
};

// The bytes behind a tensor in a CpuBuffer. An Error naming `op` and `operand` when the view's
// buffer is another backend's (or none), or the view runs past its end.
std::span<std::byte> host_bytes(const char* op, const char* operand, const Tensor& t);

// The elements behind a tensor in a CpuBuffer, which must hold T's element type.
template <class T>
std::span<T> host_span(const char* op, const char* operand, const Tensor& t) {
  if (t.type != element_type_of<std::remove_const_t<T>>()) {
    expect_tensor(op, operand, t, element_type_of<std::remove_const_t<T>>(), t.rows, t.cols);
  }
  const std::span<std::byte> bytes = host_bytes(op, operand, t);
  return {reinterpret_cast<T*>(bytes.data()), std::size_t(t.elements())};
}

}  // namespace cocktail::cpu
