#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "cocktail/stream.hpp"
#include "cocktail/tensor.hpp"
#include "cocktail/tensor_type.hpp"

namespace cocktail {

// A weight matrix as a model file stores it: `rows` output features, each a row of `cols`
// input elements in `type` (blocks run along a row). The bytes belong to the caller (usually
// an mmap of the model file).
struct WeightView {
  TensorType type = TensorType::f32;
  const std::byte* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

// A weight matrix on a backend's device (Compute::upload), in whatever layout and type its
// matmuls read fastest. Opaque except for its shape; it goes only to the Compute that made it.
class Weights {
 public:
  virtual ~Weights() = default;
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }

 protected:
  Weights(std::int64_t rows, std::int64_t cols) : rows_(rows), cols_(cols) {}

 private:
  std::int64_t rows_;
  std::int64_t cols_;
};

// Which dimensions of a head RoPE rotates together. GGUF's Llama convention rotates adjacent
// pairs (x[2i], x[2i+1]); GPT-NeoX's, which Qwen2 uses, the two halves of the head
// (x[i], x[i + head_dim/2]). Pair i turns by position · base^(-2i/head_dim) in both.
enum class RopeStyle : unsigned char { adjacent_pairs, halves };

// One product of a batch of matmuls over the same input: y = x · wᵀ.
struct MatmulOutput {
  const Weights* w = nullptr;
  Tensor y;
};

// The dense operations a Llama or BERT forward needs, so models run on every backend. Every
// operand is a device tensor of the backend this Compute came from: activations are f32
// matrices of one row per token; each call enqueues its work on `stream` and may return before
// it is done (Stream). A shape or type that does not fit is an Error naming the operation and
// the operand.
class Compute {
 public:
  virtual ~Compute() = default;
  virtual std::string_view name() const = 0;

  // The device's copy of w, made once per model: a backend may convert any type (to FP16, say)
  // or reorder rows for its kernels. A backend that reads the file's bytes in place (the CPU
  // backend does) keeps reading w.data, so the bytes must outlive the result. The result holds
  // the backend's code: destroy it before the last reference to this Compute.
  virtual std::unique_ptr<Weights> upload(const WeightView& w) = 0;

  // y[n][w.rows] = x[n][w.cols] · wᵀ.
  virtual void matmul(Stream& stream, const Weights& w, const Tensor& x, const Tensor& y) = 0;
  // Every output's y = x · wᵀ, as one matmul call per output would give (the q, k and v of a
  // layer; gate and up). A backend may prepare x once and run all the products in one pass;
  // this default makes the separate calls.
  virtual void matmul_shared_input(Stream& stream, const Tensor& x,
                                   std::span<const MatmulOutput> outputs) {
    for (const MatmulOutput& out : outputs) matmul(stream, *out.w, x, out.y);
  }
  // out[i][:] = row ids[i] of the table; ids is i32 [n][1], out [n][table.cols].
  virtual void embedding(Stream& stream, const Weights& table, const Tensor& ids,
                         const Tensor& out) = 0;
  // out[i] = x[i] / sqrt(mean(x[i]²) + eps) * weight for each row; weight is [1][x.cols].
  virtual void rms_norm(Stream& stream, const Tensor& x, const Tensor& weight, float eps,
                        const Tensor& out) = 0;
  // Rotary position embedding in place, on x[n][n_heads · head_dim]: each head's pair i, as
  // `style` forms the pairs, turns by positions[t] · base^(-2i/head_dim); positions is
  // i32 [n][1].
  virtual void rope(Stream& stream, const Tensor& x, const Tensor& positions, int n_heads,
                    int head_dim, float base, RopeStyle style) = 0;
  // gate = silu(gate) * up, elementwise (SwiGLU).
  virtual void silu_mul(Stream& stream, const Tensor& gate, const Tensor& up) = 0;
  // x += y, elementwise (residual connections).
  virtual void add(Stream& stream, const Tensor& x, const Tensor& y) = 0;

  // The BERT-style encoder ops.
  // out[i] = (x[i] - mean(x[i])) / sqrt(var(x[i]) + eps) * weight + bias for each row, with
  // weight and bias [1][x.cols] (the biased variance, as BERT's LayerNorm); out may be x.
  virtual void layer_norm(Stream& stream, const Tensor& x, const Tensor& weight, const Tensor& bias,
                          float eps, const Tensor& out) = 0;
  // x = x · Φ(x), elementwise: GELU in its exact (erf) form.
  virtual void gelu(Stream& stream, const Tensor& x) = 0;
  // x[r] += bias for each row; bias is [1][x.cols] (a linear layer's bias).
  virtual void add_bias(Stream& stream, const Tensor& x, const Tensor& bias) = 0;
  // Unmasked softmax attention inside each of a batch of sequences laid end to end, as an
  // encoder runs it: q, k, v and out are [tokens][n_heads · head_dim] with tokens =
  // Σ lengths, and every token attends to every token of its own sequence with
  // softmax(scale · q·k) per head. `lengths` is the batch's shape, read on the host.
  virtual void encoder_attention(Stream& stream, const Tensor& q, const Tensor& k, const Tensor& v,
                                 std::span<const std::int64_t> lengths, int n_heads, int head_dim,
                                 float scale, const Tensor& out) = 0;
};

}  // namespace cocktail
