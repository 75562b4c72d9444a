#pragma once

#include "cocktail/compute.hpp"
#include "compute/huge_page_arena.hpp"

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
// where the view carries one (prepare). More tokens use the integer GEMM where it runs, else
// the float GEMM over panels of decoded rows.
class CpuCompute final : public Compute {
 public:
  // With `row_groups`, prepare copies the matrices the decode GEMV reads faster in row groups.
  explicit CpuCompute(int threads, MatmulActivations activations = MatmulActivations::int8,
                      bool row_groups = true)
      : threads_(threads), activations_(activations), row_groups_(row_groups) {}

  std::string_view name() const override { return "cpu"; }
  // Q4_0, Q4_1 and Q8_0 matrices (Q8_0 with 16-bit activations), where the integer GEMV runs:
  // a RowGroupWeights copy, which the decode GEMV reads instead of the file's rows. The GEMM
  // (prefill) still reads the file's rows.
  std::unique_ptr<PreparedWeights> prepare(const WeightView& w) const override;
  void matmul(const WeightView& w, std::span<const float> x, std::int64_t n,
              std::span<float> y) override;
  void matmul_shared_input(std::span<const float> x, std::int64_t n,
                           std::span<const MatmulOutput> outputs) override;
  void embedding(const WeightView& table, std::span<const std::int32_t> ids,
                 std::span<float> out) override;
  void rms_norm(std::span<const float> x, std::span<const float> weight, float eps,
                std::span<float> out) override;
  void rope(std::span<float> x, std::span<const std::int32_t> positions, int n_heads, int head_dim,
            float base) override;
  void silu_mul(std::span<float> gate, std::span<const float> up) override;
  void add(std::span<float> x, std::span<const float> y) override;
  void layer_norm(std::span<const float> x, std::span<const float> weight,
                  std::span<const float> bias, float eps, std::span<float> out) override;
  void gelu(std::span<float> x) override;
  void add_bias(std::span<float> x, std::span<const float> bias) override;
  void encoder_attention(std::span<const float> q, std::span<const float> k,
                         std::span<const float> v, std::span<const std::int64_t> lengths,
                         int n_heads, int head_dim, float scale, std::span<float> out) override;

 private:
  int threads() const;
  // The decode path of matmul and matmul_shared_input (up to kGemvMaxTokens tokens).
  void gemv(std::span<const float> x, std::int64_t n, std::span<const MatmulOutput> outputs);
  // 8 or 16 where the integer GEMM runs for `type`, else 0 (the float paths).
  int activation_bits(TensorType type) const;
  // The activation bits of the integer GEMV for `type`, else 0 (the float GEMV).
  int gemv_bits(TensorType type) const;

  // Throws unless w.prepared is null or this Compute's copy of w.
  void check_prepared(const char* op, const WeightView& w) const;

  int threads_;
  MatmulActivations activations_;
  bool row_groups_;
  // Where prepare puts its copies; each copy keeps its own block alive, so they may outlive this.
  mutable HugePageArena arena_;
};

}  // namespace cocktail::cpu
