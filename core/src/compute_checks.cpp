#include "cocktail/compute_checks.hpp"

#include <fmt/format.h>

#include "cocktail/error.hpp"
#include "cocktail/tensor_type.hpp"

namespace cocktail {

namespace {

constexpr ElementType kF32 = ElementType::f32;

// x is an f32 matrix whose rows a norm can normalize: at least one column.
void expect_rows_to_normalize(const char* op, const Tensor& x) {
  expect_tensor(op, "x", x, kF32, x.rows, x.cols);
  if (x.cols <= 0) throw Error(fmt::format("{}: x ({}) has no columns", op, describe(x)));
}

}  // namespace

void check_weight_view(const char* op, const WeightView& w) {
  const TensorTypeInfo ti = info(w.type);
  if (w.rows <= 0 || w.cols <= 0 || w.data == nullptr) {
    throw Error(fmt::format("{}: empty weights ({} x {}, data {})", op, w.rows, w.cols,
                            w.data ? "set" : "null"));
  }
  if (w.cols % ti.block_elements != 0) {
    throw Error(
        fmt::format("{}: {} rows of {} elements are not a whole number of {}-element blocks", op,
                    ti.name, w.cols, ti.block_elements));
  }
}

void check_matmul(const char* op, const Weights& w, const Tensor& x, const Tensor& y) {
  expect_tensor(op, "x", x, kF32, x.rows, w.cols());
  expect_tensor(op, "y", y, kF32, x.rows, w.rows());
}

void check_embedding(const Weights& table, const Tensor& ids, const Tensor& out) {
  expect_tensor("embedding", "ids", ids, ElementType::i32, ids.rows, 1);
  expect_tensor("embedding", "out", out, kF32, ids.rows, table.cols());
}

void check_rms_norm(const Tensor& x, const Tensor& weight, const Tensor& out) {
  expect_rows_to_normalize("rms_norm", x);
  expect_tensor("rms_norm", "weight", weight, kF32, 1, x.cols);
  check_same_shape("rms_norm", "out", out, x);
}

void check_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                      const Tensor& out) {
  expect_rows_to_normalize("layer_norm", x);
  expect_tensor("layer_norm", "weight", weight, kF32, 1, x.cols);
  expect_tensor("layer_norm", "bias", bias, kF32, 1, x.cols);
  check_same_shape("layer_norm", "out", out, x);
}

void check_rope_settings(int n_heads, int head_dim, float base) {
  if (n_heads <= 0 || head_dim <= 0 || head_dim % 2 != 0 || !(base > 0.0f)) {
    throw Error(fmt::format(
        "rope: needs n_heads > 0, an even head_dim > 0 and base > 0, got n_heads {}, head_dim "
        "{}, base {}",
        n_heads, head_dim, base));
  }
}

void check_rope(const Tensor& x, const Tensor& positions, int n_heads, int head_dim, float base) {
  check_rope_settings(n_heads, head_dim, base);
  expect_tensor("rope", "positions", positions, ElementType::i32, positions.rows, 1);
  expect_tensor("rope", "x", x, kF32, positions.rows, std::int64_t(n_heads) * head_dim);
}

void check_same_shape(const char* op, const char* operand, const Tensor& t, const Tensor& like) {
  expect_tensor(op, operand, t, kF32, like.rows, like.cols);
}

void check_add_bias(const Tensor& x, const Tensor& bias) {
  expect_tensor("add_bias", "x", x, kF32, x.rows, x.cols);
  expect_tensor("add_bias", "bias", bias, kF32, 1, x.cols);
}

std::int64_t check_encoder_batch(std::span<const std::int64_t> lengths, int n_heads, int head_dim) {
  if (n_heads <= 0 || head_dim <= 0) {
    throw Error(fmt::format(
        "encoder_attention: needs n_heads > 0 and head_dim > 0, got n_heads {}, head_dim {}",
        n_heads, head_dim));
  }
  std::int64_t tokens = 0;
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    if (lengths[s] <= 0) {
      throw Error(
          fmt::format("encoder_attention: sequence {} has length {}; every sequence needs a token",
                      s, lengths[s]));
    }
    tokens += lengths[s];
  }
  return tokens;
}

std::int64_t check_encoder_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                     std::span<const std::int64_t> lengths, int n_heads,
                                     int head_dim, const Tensor& out) {
  const std::int64_t tokens = check_encoder_batch(lengths, n_heads, head_dim);
  const std::int64_t width = std::int64_t(n_heads) * head_dim;
  expect_tensor("encoder_attention", "q", q, kF32, tokens, width);
  expect_tensor("encoder_attention", "k", k, kF32, tokens, width);
  expect_tensor("encoder_attention", "v", v, kF32, tokens, width);
  expect_tensor("encoder_attention", "out", out, kF32, tokens, width);
  return tokens;
}

}  // namespace cocktail
