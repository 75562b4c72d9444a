#pragma once

// The operand rules every Compute enforces before it enqueues work, whatever its device. Each
// throws a cocktail::Error naming the operation and the operand, as "matmul: y is f32 [2 x 7];
// expected f32 [2 x 8]". Whether a tensor's buffer is the backend's own is the backend's to check
// as it resolves the tensor to its memory.

#include <cstdint>
#include <span>

#include "cocktail/compute.hpp"
#include "cocktail/tensor.hpp"

namespace cocktail {

// A weight matrix as its file stores it: a positive shape, its bytes, whole blocks per row.
void check_weight_view(const char* op, const WeightView& w);

// x f32 [n][w.cols] and y f32 [n][w.rows], for any n.
void check_matmul(const char* op, const Weights& w, const Tensor& x, const Tensor& y);

// ids i32 [n][1] and out f32 [n][table.cols].
void check_embedding(const Weights& table, const Tensor& ids, const Tensor& out);

// x f32 with at least one column, weight f32 [1][x.cols], out f32 shaped as x.
void check_rms_norm(const Tensor& x, const Tensor& weight, const Tensor& out);

// As rms_norm, and bias f32 [1][x.cols].
void check_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out);

// n_heads > 0, an even head_dim > 0 and base > 0.
void check_rope_settings(int n_heads, int head_dim, float base);

// The settings, x f32 [n][n_heads · head_dim] and positions i32 [n][1].
void check_rope(const Tensor& x, const Tensor& positions, int n_heads, int head_dim, float base);

// `operand` (the second of an elementwise op: silu_mul's up, add's y) is f32 shaped as `like`.
void check_same_shape(const char* op, const char* operand, const Tensor& t, const Tensor& like);

// bias f32 [1][x.cols].
void check_add_bias(const Tensor& x, const Tensor& bias);

// n_heads > 0, head_dim > 0 and a positive length for every sequence; returns the batch's
// tokens, the sum of the lengths.
std::int64_t check_encoder_batch(std::span<const std::int64_t> lengths, int n_heads, int head_dim);

// The batch, and q, k, v and out f32 [tokens][n_heads · head_dim]; returns the tokens.
std::int64_t check_encoder_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                     std::span<const std::int64_t> lengths, int n_heads,
                                     int head_dim, const Tensor& out);

}  // namespace cocktail
