#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "cocktail/tensor_type.hpp"

namespace cocktail {

// A backend's own copy of a weight matrix, laid out the way its kernels read fastest
// (Compute::prepare). Opaque to everyone else.
class PreparedWeights {
 public:
  virtual ~PreparedWeights() = default;
};

// A weight matrix as a model file stores it: `rows` output features, each a row of `cols`
// input elements in `type` (blocks run along a row). The bytes belong to the caller (usually
// an mmap of the model file) and must outlive the call.
struct WeightView {
  TensorType type = TensorType::f32;
  const std::byte* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  // The copy Compute::prepare made of this matrix, or null. A view carrying one goes only to
  // the Compute that made it (others refuse it); like `data`, it must outlive the call.
  const PreparedWeights* prepared = nullptr;
};

// One product of a batch of matmuls over the same input: y = x · wᵀ.
struct MatmulOutput {
  WeightView w;
  std::span<float> y;
};

// The dense operations a Llama or BERT forward needs, so models run on every backend. All
// activations are row-major float32 host buffers of `n` rows (tokens); an operation may run
// in parallel inside, and returns when its output is complete.
class Compute {
 public:
  virtual ~Compute() = default;
  virtual std::string_view name() const = 0;

  // A copy of w in the layout this backend's matmuls read fastest, or null where they read the
  // file's layout as fast (the default). Set it as the view's `prepared` to use it; it costs
  // memory about the size of the matrix. It holds the backend's code: destroy it before the
  // last reference to this Compute.
  virtual std::unique_ptr<PreparedWeights> prepare(const WeightView& /*w*/) const {
    return nullptr;
  }

  // y[n][w.rows] = x[n][w.cols] · wᵀ, dequantizing the weights on the fly.
  virtual void matmul(const WeightView& w, std::span<const float> x, std::int64_t n,
                      std::span<float> y) = 0;
  // Every output's y = x[n][cols] · wᵀ, as one matmul call per output would give (the q, k and
  // v of a layer; gate and up). A backend may prepare x once and run all the products in one
  // parallel pass; this default makes the separate calls.
  virtual void matmul_shared_input(std::span<const float> x, std::int64_t n,
                                   std::span<const MatmulOutput> outputs) {
    for (const MatmulOutput& out : outputs) matmul(out.w, x, n, out.y);
  }
  // out[i][:] = row ids[i] of the table, dequantized.
  virtual void embedding(const WeightView& table, std::span<const std::int32_t> ids,
                         std::span<float> out) = 0;
  // out[i] = x[i] / sqrt(mean(x[i]²) + eps) * weight, for each row of weight.size() elements.
  virtual void rms_norm(std::span<const float> x, std::span<const float> weight, float eps,
                        std::span<float> out) = 0;
  // Rotary position embedding in place, on x[n][n_heads][head_dim], rotating adjacent pairs
  // (x[2i], x[2i+1]) by positions[t] · base^(-2i/head_dim) (GGUF's Llama convention).
  virtual void rope(std::span<float> x, std::span<const std::int32_t> positions, int n_heads,
                    int head_dim, float base) = 0;
  // gate[i] = silu(gate[i]) * up[i], elementwise (SwiGLU).
  virtual void silu_mul(std::span<float> gate, std::span<const float> up) = 0;
  // x[i] += y[i], elementwise (residual connections).
  virtual void add(std::span<float> x, std::span<const float> y) = 0;

  // The BERT-style encoder ops.
  // out[i] = (x[i] - mean(x[i])) / sqrt(var(x[i]) + eps) * weight + bias for each row of
  // weight.size() elements (the biased variance, as BERT's LayerNorm); out may be x.
  virtual void layer_norm(std::span<const float> x, std::span<const float> weight,
                          std::span<const float> bias, float eps, std::span<float> out) = 0;
  // x[i] = x[i] · Φ(x[i]), elementwise: GELU in its exact (erf) form.
  virtual void gelu(std::span<float> x) = 0;
  // x[r][:] += bias for each row of bias.size() elements (a linear layer's bias).
  virtual void add_bias(std::span<float> x, std::span<const float> bias) = 0;
  // Unmasked softmax attention inside each of a batch of sequences laid end to end, as an
  // encoder runs it: q, k, v and out are [tokens][n_heads][head_dim] with tokens =
  // Σ lengths, and every token attends to every token of its own sequence with
  // softmax(scale · q·k) per head.
  virtual void encoder_attention(std::span<const float> q, std::span<const float> k,
                                 std::span<const float> v, std::span<const std::int64_t> lengths,
                                 int n_heads, int head_dim, float scale, std::span<float> out) = 0;
};

}  // namespace cocktail
