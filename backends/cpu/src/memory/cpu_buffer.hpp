#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>

#include "cocktail/buffer.hpp"
#include "cocktail/tensor.hpp"

namespace cocktail::cpu {

// The CPU backend's device memory: host memory aligned to a cache line.
class CpuBuffer final : public Buffer {
 public:
  // Throws Error naming the size when the memory is not there.
  explicit CpuBuffer(std::size_t bytes);

  std::size_t size() const override { return size_; }
  std::byte* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::size_t size_;
  std::unique_ptr<std::byte, Free> data_;
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
