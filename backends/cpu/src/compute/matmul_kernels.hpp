#pragma once

#include <hwy/aligned_allocator.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cocktail/compute.hpp"

namespace cocktail::cpu {

// y[t][r] = x[t] · w[r] for t < n and r in [row_begin, row_end), in float: each weight row is
// streamed once per 4 tokens, decoded in registers and dotted with them. x is [n][w.cols], y is
// [n][w.rows]. Beyond kGemvMaxTokens tokens the GEMM is faster. (int_gemv_rows below is the
// same with 16-bit activations.)
constexpr std::int64_t kGemvMaxTokens = 4;
void gemv_rows(const WeightView& w, const float* x, std::int64_t n, float* y,
               std::int64_t row_begin, std::int64_t row_end);

// Activations quantized for the integer GEMM, per token in blocks of kActivationBlock elements:
// q = round(x / d) with d = max|x| / qmax (127 for 8 bits, 32767 for 16), and s = d · Σq per
// block (what a weight block's offset multiplies).
constexpr std::int64_t kActivationBlock = 32;
struct QuantizedActivations {
  QuantizedActivations(int activation_bits, std::int64_t tokens, std::int64_t n_cols);

  int bits;  // 8 or 16
  std::int64_t cols;
  std::vector<std::int8_t> q8;            // [tokens][cols] with 8 bits
  std::vector<std::int16_t> q16;          // [tokens][cols] with 16 bits
  std::vector<float> d;                   // [tokens][cols / kActivationBlock]
  std::vector<float> s;                   // [tokens][cols / kActivationBlock]
  std::vector<std::uint8_t> byte_planes;  // 16 bits, for the GEMV: see split_byte_planes
};

// Whether this CPU runs the integer GEMM for weights of `type`: AVX-512 VNNI, and a type whose
// 32-element blocks are codes with one scale and one offset (q4_0, q4_1, q8_0, q4_k).
bool integer_gemm_supported(TensorType type);

// Quantizes tokens [token_begin, token_end) of x[tokens][cols] into out.
void quantize_activations(const float* x, std::int64_t token_begin, std::int64_t token_end,
                          QuantizedActivations& out);

// How this CPU runs the GEMV for weights of `type` with activations of `activation_bits`:
//   none:  in float (gemv_rows);
//   vnni:  AVX-512 VNNI: q4_0 or q4_1 (8 or 16 bits) or q8_0 (16 bits); 16-bit activations need
//          split_byte_planes; a row-group copy (RowGroupWeights) serves it too;
//   pairs: below AVX-512 (AVX2, SSE4, NEON): q4_0 or q4_1 (8 or 16 bits) or q8_0 (16 bits),
//          codes and activations multiplied as 16-bit pairs in the file's layout.
enum class IntegerGemv { none, vnni, pairs };
IntegerGemv integer_gemv(TensorType type, int activation_bits);
// integer_gemv(type, activation_bits) != IntegerGemv::none.
bool integer_gemv_supported(TensorType type, int activation_bits);

// For the integer GEMV with 16-bit activations: each block's codes q split into byte planes,
// q = 256·h + l with h signed and l unsigned, stored per block as its 32 h then its 32 l.
void split_byte_planes(QuantizedActivations& xq);

// gemv_rows on quantized activations (quantize_activations of all n tokens, then for the VNNI
// kernels with 16 bits split_byte_planes): each block is dotted with the activations in
// integers (vpdpbusd, vpdpwssd for q8_0; 16-bit pairs below AVX-512). Throws cocktail::Error
// when integer_gemv_supported(w.type, xq.bits) does not hold or the VNNI kernels' byte planes
// are missing.
void int_gemv_rows(const WeightView& w, const QuantizedActivations& xq, std::int64_t n, float* y,
                   std::int64_t row_begin, std::int64_t row_end);

// One thread's packed weight panels, reused from task to task; gemm_scratch_bytes() says how
// large it must be. Allocated before the threads start, so no allocation can fail inside them.
class GemmScratch {
 public:
  explicit GemmScratch(std::size_t bytes);
  std::uint8_t* data() const { return buffer_.get(); }

 private:
  hwy::AlignedFreeUniquePtr<std::uint8_t[]> buffer_;
};

// Scratch bytes one thread needs for gemm_rows on w: by the integer path with activations of
// `activation_bits` (8 or 16), or by the float path (0).
std::size_t gemm_scratch_bytes(const WeightView& w, int activation_bits);

// A GEMM task: y[t][r] for r in [row_begin, row_end) and t in [token_begin, token_end).
// row_begin must be a multiple of kGemmRowQuantum (every target's panel height divides it).
// With xq set (integer_gemm_supported must hold) the integer path runs, else the float path,
// which decodes panels of weight rows to float.
constexpr std::int64_t kGemmRowQuantum = 32;
struct GemmTask {
  const WeightView* w = nullptr;
  const float* x = nullptr;                  // [tokens][cols]
  const QuantizedActivations* xq = nullptr;  // null: the float path
  float* y = nullptr;                        // [tokens][rows]
  std::int64_t row_begin = 0;
  std::int64_t row_end = 0;
  std::int64_t token_begin = 0;
  std::int64_t token_end = 0;
};
void gemm_rows(const GemmTask& task, const GemmScratch& scratch);

}  // namespace cocktail::cpu
