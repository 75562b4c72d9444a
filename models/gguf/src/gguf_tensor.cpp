#include "cocktail/models/gguf_tensor.hpp"

#include <array>

namespace cocktail::models {

namespace {

struct GgmlType {
  std::uint32_t id;
  TensorType type;
};

constexpr std::array<GgmlType, 8> kSupported{{
    {0, TensorType::f32},
    {1, TensorType::f16},
    {2, TensorType::q4_0},
    {3, TensorType::q4_1},
    {8, TensorType::q8_0},
    {12, TensorType::q4_k},
    {14, TensorType::q6_k},
    {30, TensorType::bf16},
}};

// ggml's type names by id; the ids ggml has retired keep their old names.
constexpr std::array<std::string_view, 42> kGgmlNames{
    "F32",   "F16",        "Q4_0",       "Q4_1",       "Q4_2",     "Q4_3",     "Q5_0",
    "Q5_1",  "Q8_0",       "Q8_1",       "Q2_K",       "Q3_K",     "Q4_K",     "Q5_K",
    "Q6_K",  "Q8_K",       "IQ2_XXS",    "IQ2_XS",     "IQ3_XXS",  "IQ1_S",    "IQ4_NL",
    "IQ3_S", "IQ2_S",      "IQ4_XS",     "I8",         "I16",      "I32",      "I64",
    "F64",   "IQ1_M",      "BF16",       "Q4_0_4_4",   "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",
    "TQ2_0", "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4",    "NVFP4",    "Q1_0",
};

}  // namespace

std::optional<TensorType> tensor_type_from_ggml(std::uint32_t ggml_type) {
  for (const GgmlType& t : kSupported)
    if (t.id == ggml_type) return t.type;
  return std::nullopt;
}

std::uint32_t ggml_type_id(TensorType type) {
  for (const GgmlType& t : kSupported)
    if (t.type == type) return t.id;
  return ~std::uint32_t{0};  // unreachable: every TensorType is in the table
}

std::string_view ggml_type_name(std::uint32_t ggml_type) {
  return ggml_type < kGgmlNames.size() ? kGgmlNames[ggml_type] : std::string_view();
}

std::int64_t GgufTensor::elements() const {
  std::int64_t n = 1;
  for (const std::int64_t d : dims) n *= d;
  return n;
}

}  // namespace cocktail::models
