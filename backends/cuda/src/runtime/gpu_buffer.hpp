#pragma once

#include <cstddef>
#include <type_traits>

#include "cocktail/buffer.hpp"
#include "cocktail/tensor.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

// Device memory of one GPU: its own (cudaMalloc, freed with it) or a host's
// (Backend::wrap_memory), which it does not free.
class GpuBuffer final : public Buffer {
 public:
  // Throws Error naming the size and the device when the memory is not there.
  GpuBuffer(std::size_t bytes, int device);
  // A view of device memory the host owns.
  GpuBuffer(void* memory, std::size_t bytes, int device)
      : size_(bytes), data_(static_cast<std::byte*>(memory)), device_(device), owned_(false) {}
  ~GpuBuffer() override;
  GpuBuffer(const GpuBuffer&) = delete;
  GpuBuffer& operator=(const GpuBuffer&) = delete;

  std::size_t size() const override { return size_; }
  std::byte* data() const { return data_; }
  int device() const { return device_; }

 private:
  friend std::byte* device_bytes(const char* op, const char* operand, const Tensor& t);

  std::size_t size_;
  std::byte* data_ = nullptr;
  int device_;
  bool owned_ = true;
  // Which plugin made it: the CUDA and the HIP plugin compile this same class, and a
  // dynamic_cast, which compares type names, takes either's buffer for its own.
  const char* backend_ = kBackendName;
};

// The device address of a tensor in a GpuBuffer. An Error naming `op` and `operand` when the
// view's buffer is another backend's (or none), runs past its end, or is not element-aligned.
std::byte* device_bytes(const char* op, const char* operand, const Tensor& t);

// The element type a kernel reads T as: float f32, __half f16, int i32 (const or not).
template <class T>
constexpr ElementType device_element_type() {
  if constexpr (std::is_same_v<std::remove_const_t<T>, __half>) {
    return ElementType::f16;
  } else {
    return element_type_of<std::remove_const_t<T>>();
  }
}

// device_bytes, typed: the tensor must hold T's element type.
template <class T>
T* device_pointer(const char* op, const char* operand, const Tensor& t) {
  constexpr ElementType type = device_element_type<T>();
  if (t.type != type) expect_tensor(op, operand, t, type, t.rows, t.cols);
  return reinterpret_cast<T*>(device_bytes(op, operand, t));
}

}  // namespace cocktail::gpu
