#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "cocktail/tensor_type.hpp"

namespace cocktail::models {

// ggml's type ids, as GGUF tensor infos store them: the supported ones map to a TensorType
// (F32=0, F16=1, Q4_0=2, Q4_1=3, Q8_0=8, Q4_K=12, Q6_K=14, BF16=30), every other id to nullopt.
std::optional<TensorType> tensor_type_from_ggml(std::uint32_t ggml_type);
std::uint32_t ggml_type_id(TensorType type);
// ggml's name for a type id ("Q5_K", "IQ2_XS"); empty for an id ggml does not define.
std::string_view ggml_type_name(std::uint32_t ggml_type);

// One tensor of a GgufFile: a view whose name and data point into the file's mapping, valid
// while the file lives. The file checked that the data lies within it, starts on the file's
// alignment, and that a row (dims[0] elements) is a whole number of the type's blocks.
struct GgufTensor {
  std::string_view name;
  TensorType type = TensorType::f32;
  std::vector<std::int64_t> dims;  // ne0 (the row length, contiguous) first, as GGUF stores them
  const std::byte* data = nullptr;
  std::size_t bytes = 0;
  std::uint64_t offset = 0;  // of the data, from the start of the file's data section

  std::int64_t elements() const;
  std::int64_t rows() const { return elements() / dims.at(0); }
  std::span<const std::byte> span() const { return {data, bytes}; }
};

}  // namespace cocktail::models
