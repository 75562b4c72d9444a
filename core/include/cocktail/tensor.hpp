#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cocktail/buffer.hpp"

namespace cocktail {

// Element types of the tensors that pass between a model and a backend: activations (f32,
// f16) and indices (i32: token ids, positions). Weight matrices travel as WeightView and
// Compute::upload instead, in their file's types.
enum class ElementType : unsigned char { f32, f16, i32 };

constexpr std::size_t element_bytes(ElementType t) {
  return t == ElementType::f16 ? 2 : 4;
}

constexpr std::string_view to_string(ElementType t) {
  switch (t) {
    case ElementType::f32:
      return "f32";
    case ElementType::f16:
      return "f16";
    case ElementType::i32:
      return "i32";
  }
  return "?";
}

// The element type a host type copies as (Stream's typed upload and download).
template <class T>
constexpr ElementType element_type_of();
template <>
constexpr ElementType element_type_of<float>() {
  return ElementType::f32;
}
template <>
constexpr ElementType element_type_of<std::int32_t>() {
  return ElementType::i32;
}

// A typed view into a device Buffer: a row-major matrix of `rows` rows of `cols` elements,
// starting `offset` bytes into the buffer. A buffer and an offset, never a raw pointer, since
// some devices (Vulkan) have none. A view owns nothing: the buffer must outlive every use.
struct Tensor {
  Buffer* buffer = nullptr;
  std::size_t offset = 0;
  ElementType type = ElementType::f32;
  std::int64_t rows = 0;
  std::int64_t cols = 0;

  std::int64_t elements() const { return rows * cols; }
  std::size_t bytes() const { return std::size_t(elements()) * element_bytes(type); }
  // Rows [first, first + count) of this view; an Error when they are not all inside it.
  Tensor row_range(std::int64_t first, std::int64_t count) const;
};

// "f32 [4 x 576]", for error messages.
std::string describe(const Tensor& t);

// Throws an Error naming `op` and `operand` unless `t` is a `type` tensor of rows x cols.
void expect_tensor(const char* op, const char* operand, const Tensor& t, ElementType type,
                   std::int64_t rows, std::int64_t cols);

// Throws an Error naming `op` and `operand` unless `t` lies inside its buffer of `buffer_bytes`
// bytes and starts on a whole element: what every backend checks of a view in its own buffer.
void expect_inside_buffer(const char* op, const char* operand, const Tensor& t,
                          std::size_t buffer_bytes);

}  // namespace cocktail
