#pragma once

#include "cocktail/compute.hpp"

namespace cocktail::cpu {

// How matmul treats activations where the integer GEMM runs (AVX-512 VNNI; q4_0, q4_1, q8_0
// and q4_k weights; prefill, as decode runs the float GEMV). On SmolLM2-135M (Q4_1), against a
// float64 forward: int8, the fastest, rounds activations per 32 elements as llama.cpp does and
// moves logits by up to about 1.1 (llama.cpp: 0.75); int16 runs the GEMM at about 0.4 times int8's
// speed and moves them by 0.03; f32 keeps every matmul in float (about 0.3 times int8's speed),
// 0.009.
enum class MatmulActivations { int8, int16, f32 };

// The CPU backend's dense operations. Shapes are checked here (a mismatch throws Error naming
// the operand, what was expected and what came); the work is split across `threads` OpenMP
// threads (0 = OpenMP's default) and runs in the Highway kernels of compute/*_kernels.
//
// matmul: up to kGemvMaxTokens tokens (decode) stream each weight row once and dot it in float
// (GEMV), whatever the activation mode: repacking panels for the integer GEMM costs more than
// it saves on so few tokens, and float activations are exact. More tokens use the integer GEMM
// where it runs, else the float GEMM over panels of decoded rows.
class CpuCompute final : public Compute {
 public:
  explicit CpuCompute(int threads, MatmulActivations activations = MatmulActivations::int8)
      : threads_(threads), activations_(activations) {}

  std::string_view name() const override { return "cpu"; }
  void matmul(const WeightView& w, std::span<const float> x, std::int64_t n,
              std::span<float> y) override;
  void embedding(const WeightView& table, std::span<const std::int32_t> ids,
                 std::span<float> out) override;
  void rms_norm(std::span<const float> x, std::span<const float> weight, float eps,
                std::span<float> out) override;
  void rope(std::span<float> x, std::span<const std::int32_t> positions, int n_heads, int head_dim,
            float base) override;
  void silu_mul(std::span<float> gate, std::span<const float> up) override;
  void add(std::span<float> x, std::span<const float> y) override;

 private:
  int threads() const;
  // 8 or 16 where the integer GEMM runs for `type`, else 0 (the float paths).
  int activation_bits(TensorType type) const;

  int threads_;
  MatmulActivations activations_;
};

}  // namespace cocktail::cpu
