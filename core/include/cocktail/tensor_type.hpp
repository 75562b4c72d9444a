#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cocktail {

// Element types of model weights, as GGUF files store them. Quantized types hold rows in
// blocks of `block_elements` elements; a row's length is a whole number of blocks.
enum class TensorType : unsigned char { f32, f16, bf16, q8_0, q4_0, q4_1, q4_k, q6_k };

struct TensorTypeInfo {
  std::string_view name;
  int block_elements;  // elements per block (1 for plain floats)
  int block_bytes;     // bytes per block, scales included
};

constexpr TensorTypeInfo info(TensorType t) {
  switch (t) {
    case TensorType::f32:
      return {"f32", 1, 4};
    case TensorType::f16:
      return {"f16", 1, 2};
    case TensorType::bf16:
      return {"bf16", 1, 2};
    case TensorType::q8_0:
      return {"q8_0", 32, 34};  // fp16 scale + 32 int8
    case TensorType::q4_0:
      return {"q4_0", 32, 18};  // fp16 scale + 16 bytes of nibbles
    case TensorType::q4_1:
      return {"q4_1", 32, 20};  // fp16 scale + fp16 min + 16 bytes of nibbles
    case TensorType::q4_k:
      return {"q4_k", 256, 144};  // fp16 d, dmin + 12 bytes of 6-bit scales + 128 bytes
    case TensorType::q6_k:
      return {"q6_k", 256, 210};  // 128 low + 64 high bytes + 16 int8 scales + fp16 d
  }
  return {"?", 1, 1};
}

// Bytes of a row of `elements` elements; `elements` must be a multiple of the block size.
constexpr std::size_t row_bytes(TensorType t, std::int64_t elements) {
  const TensorTypeInfo i = info(t);
  return std::size_t(elements / i.block_elements) * std::size_t(i.block_bytes);
}

constexpr std::string_view to_string(TensorType t) {
  return info(t).name;
}

}  // namespace cocktail
