#pragma once

#include "cocktail/compute.hpp"
#include "compute/huge_page_arena.hpp"
#include "compute/row_groups.hpp"

namespace cocktail::cpu {

// How matmul treats activations where the integer kernels run (AVX-512 VNNI; the GEMM for
// q4_0, q4_1, q8_0 and q4_k weights, the GEMV for q4_0 and q4_1, and q8_0 with 16 bits). int8,
// the fastest, rounds activations per 32 elements as llama.cpp does; int16 runs the GEMM at
// 0.45-0.6 of int8's speed and f32 (no rounding) at 0.35-0.45. Their effect on SmolLM2's logits
// is in docs/results.md.
enum class MatmulActivations { int8, int16, f32 };

// The CPU backend's dense operations. Shapes are checked here (a mismatch throws Error naming
// the operand, what was expected and what came); the work is split across `threads` OpenMP
// threads (0 = OpenMP's default) and runs in the Highway kernels of compute/*_kernels.
//
// matmul: up to kGemvMaxTokens tokens (decode) stream each weight row once (GEMV): repacking
// panels for the GEMM costs more than it saves on so few tokens. The GEMV is integer where the
// activations are rounded and a kernel takes the type, else float; it reads the row-group copy
// where the weights carry one (upload). More tokens use the integer GEMM where it runs, else
// the float GEMM over panels of decoded rows.
class CpuCompute;

// A matrix as the CPU's matmuls read it (CpuCompute::upload): the file's bytes in place, plus a
// row-group copy where the decode GEMV reads one faster.
class CpuWeights final : public Weights {
 public:
  CpuWeights(const WeightView& file, std::unique_ptr<RowGroupWeights> row_groups,
             const CpuCompute* maker)
      : Weights(file.rows, file.cols),
        file_(file),
        row_groups_(std::move(row_groups)),
        maker_(maker) {}

  const WeightView& file() const { return file_; }
  const RowGroupWeights* row_groups() const { return row_groups_.get(); }
  const CpuCompute* maker() const { return maker_; }

 private:
  WeightView file_;
  std::unique_ptr<RowGroupWeights> row_groups_;
  const CpuCompute* maker_;
};

// One product of matmul_shared_input on host spans.
struct HostMatmulOutput {
  const CpuWeights* w = nullptr;
  std::span<float> y;
};

class CpuCompute final : public Compute {
 public:
  // With `row_groups`, upload copies the matrices the decode GEMV reads faster in row groups.
  explicit CpuCompute(int threads, MatmulActivations activations = MatmulActivations::int8,
                      bool row_groups = true)
      : threads_(threads), activations_(activations), row_groups_(row_groups) {}

  std::string_view name() const override { return "cpu"; }
  // Reads the file's rows in place; Q4_0, Q4_1 and Q8_0 matrices (Q8_0 with 16-bit
  // activations), where the integer GEMV runs, also get a RowGroupWeights copy, which the
  // decode GEMV reads instead of the file's rows. The GEMM (prefill) still reads the file's.
  std::unique_ptr<Weights> upload(const WeightView& w) override { return upload_matrix(w); }
  std::unique_ptr<CpuWeights> upload_matrix(const WeightView& w) const;

  // The Compute interface: each call resolves its tensors to the host memory of CPU buffers
  // and runs the host form below before it returns.
  void matmul(Stream& stream, const Weights& w, const Tensor& x, const Tensor& y) override;
  void matmul_shared_input(Stream& stream, const Tensor& x,
                           std::span<const MatmulOutput> outputs) override;
  void embedding(Stream& stream, const Weights& table, const Tensor& ids,
                 const Tensor& out) override;
  void rms_norm(Stream& stream, const Tensor& x, const Tensor& weight, float eps,
                const Tensor& out) override;
  void rope(Stream& stream, const Tensor& x, const Tensor& positions, int n_heads, int head_dim,
            float base, RopeStyle style) override;
  void silu_mul(Stream& stream, const Tensor& gate, const Tensor& up) override;
  void add(Stream& stream, const Tensor& x, const Tensor& y) override;
  void layer_norm(Stream& stream, const Tensor& x, const Tensor& weight, const Tensor& bias,
                  float eps, const Tensor& out) override;
  void gelu(Stream& stream, const Tensor& x) override;
  void add_bias(Stream& stream, const Tensor& x, const Tensor& bias) override;
  void encoder_attention(Stream& stream, const Tensor& q, const Tensor& k, const Tensor& v,
                         std::span<const std::int64_t> lengths, int n_heads, int head_dim,
                         float scale, const Tensor& out) override;

  // The host forms, on row-major float spans of `n` rows (the CPU tests and micro-benchmarks
  // call them directly). Each splits its work across the threads.
  void matmul(const CpuWeights& w, std::span<const float> x, std::int64_t n, std::span<float> y);
  void matmul_shared_input(std::span<const float> x, std::int64_t n,
                           std::span<const HostMatmulOutput> outputs);
  void embedding(const WeightView& table, std::span<const std::int32_t> ids, std::span<float> out);
  void rms_norm(std::span<const float> x, std::span<const float> weight, float eps,
                std::span<float> out);
  void rope(std::span<float> x, std::span<const std::int32_t> positions, int n_heads, int head_dim,
            float base, RopeStyle style);
  void silu_mul(std::span<float> gate, std::span<const float> up);
  void add(std::span<float> x, std::span<const float> y);
  void layer_norm(std::span<const float> x, std::span<const float> weight,
                  std::span<const float> bias, float eps, std::span<float> out);
  void gelu(std::span<float> x);
  void add_bias(std::span<float> x, std::span<const float> bias);
  void encoder_attention(std::span<const float> q, std::span<const float> k,
                         std::span<const float> v, std::span<const std::int64_t> lengths,
                         int n_heads, int head_dim, float scale, std::span<float> out);

 private:
  int threads() const;
  // The decode path of matmul and matmul_shared_input (up to kGemvMaxTokens tokens).
  void gemv(std::span<const float> x, std::int64_t n, std::span<const HostMatmulOutput> outputs);
  // The bits of the activations mode: 8, 16, or 0 for f32.
  int mode_bits() const;
  // 8 or 16 where the integer GEMM runs for `type`, else 0 (the float paths).
  int activation_bits(TensorType type) const;
  // The activation bits of the integer GEMV for `type`, else 0 (the float GEMV).
  int gemv_bits(TensorType type) const;
  // w as this Compute's own upload; an Error naming `op` when another Compute made it.
  const CpuWeights& own(const char* op, const Weights& w) const;

  int threads_;
  MatmulActivations activations_;
  bool row_groups_;
  // Where upload puts its copies; each copy keeps its own block alive, so they may outlive this.
  mutable HugePageArena arena_;
};

}  // namespace cocktail::cpu
