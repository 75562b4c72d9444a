#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cocktail/compute.hpp"
#include "compute/huge_page_arena.hpp"
#include "compute/matmul_kernels.hpp"

namespace cocktail::cpu {

// A Q4_0, Q4_1 or Q8_0 matrix copied for the decode GEMV (CpuCompute::upload) in groups of
// kRowGroupRows rows, the last one padded with zero rows. A group stores its blocks in order;
// each block is the group's codes interleaved by 32-bit lanes (lane r: row r), then its 16
// scales and, for Q4, 16 offsets (Q4_0's is -8·scale), all fp16:
//   Q4: 4 vectors, vector v holding code bytes 4v..4v+3 of each row (elements 4v..4v+3 in the
//       low nibbles, 16+4v..19+4v in the high ones); 256 + 64 bytes a block.
//   Q8: 16 vectors, vector p holding codes 2p and 2p+1 of each row; 512 + 32 bytes a block.
// One vpdpbusd (vpdpwssd for Q8) against a broadcast lane of activations then gives 16 rows'
// partial sums with no horizontal adds, and the matrix is read as one stream: in the file's
// layout the GEMV reads 4 rows side by side and spends about 3 times the vector operations
// per weight byte, too many for two cores to keep up with memory. AVX2 reads the same copy as
// two halves of 8 rows, with vpmaddubsw and vpmaddwd in place of vpdpbusd, and gets the same
// integer sums.
constexpr std::int64_t kRowGroupRows = 16;

class RowGroupWeights {
 public:
  // Copies w into memory from `arena`. Throws Error for another type, or a Q4_0 scale too
  // large for its offset (-8·scale) to be an fp16.
  RowGroupWeights(const WeightView& w, HugePageArena& arena);

  TensorType type() const { return type_; }
  std::int64_t rows() const { return rows_; }
  std::int64_t blocks() const;  // blocks a row holds
  std::size_t block_bytes() const;
  // The first byte of group g.
  const std::uint8_t* group(std::int64_t g) const;

 private:
  TensorType type_;
  std::int64_t rows_, cols_;
  std::shared_ptr<std::uint8_t> bytes_;
};

// Whether this CPU has a row-group kernel for weights of `type` with `activation_bits`: where
// the VNNI kernels run (integer_gemv(...) == IntegerGemv::vnni), and on AVX2 for q4_0, q4_1
// and q8_0 with 16-bit activations.
bool row_group_gemv_supported(TensorType type, int activation_bits);

// int_gemv_rows over the copy: rows [row_begin, row_end), row_begin a multiple of
// kRowGroupRows and row_end one or w.rows(). Throws Error where row_group_gemv_supported does
// not hold, or when 16-bit activations of Q4 weights lack their byte planes.
void row_group_gemv(const RowGroupWeights& w, const QuantizedActivations& xq, std::int64_t n,
                    float* y, std::int64_t row_begin, std::int64_t row_end);

}  // namespace cocktail::cpu
