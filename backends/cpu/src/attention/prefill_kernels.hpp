#pragma once

#include <hwy/aligned_allocator.h>

#include <cstdint>

namespace cocktail::cpu {

// One thread's share of causal prefill attention over the FP16 tail: a block of consecutive
// query tokens times the query heads of one KV head. Rows are token-major: row r is token
// r / group, head r % group. Keys are taken a tile at a time, widened to float once and reused
// by every row of the block, so the work is two small matrix products per tile instead of one
// matrix-vector product per query and key tile.
struct PrefillBlock {
  const std::uint16_t* keys = nullptr;    // tail keys [tail tokens][head_dim], FP16 bits
  const std::uint16_t* values = nullptr;  // tail values, the same shape
  int head_dim = 0;
  int group = 0;             // query heads per KV head
  int tokens = 0;            // query tokens in the block
  const float* q = nullptr;  // the block's first query head, pre-multiplied by the softmax scale
  std::int64_t q_token_stride = 0;  // floats from one query token to the next
  // Tail tokens the block's first query sees (itself included); each later query sees one more.
  std::int64_t first_visible = 0;
  // Softmax state per row: on entry that of the tokens before the tail (m = -inf, l = 0, o = 0
  // when there are none); on exit it includes the tail.
  float* m = nullptr;  // [rows]
  float* l = nullptr;  // [rows]
  float* o = nullptr;  // [rows][head_dim], unnormalised
};

// Keys per tile of the prefill kernel.
inline constexpr int kPrefillKeyTile = 64;
// head_dim must be a multiple of this: a whole number of vectors on every SIMD target (the KV
// store asks for multiples of 32).
inline constexpr int kPrefillDimQuantum = 16;

// A thread's working buffers for blocks of up to `max_rows` rows; allocated before the threads
// start, so nothing can fail to allocate inside them.
class PrefillScratch {
 public:
  PrefillScratch(int head_dim, int max_rows);

  float* keys() const { return keys_.get(); }        // [head_dim][kPrefillKeyTile], transposed
  float* values() const { return values_.get(); }    // [kPrefillKeyTile][head_dim]
  float* scores() const { return scores_.get(); }    // [max_rows][kPrefillKeyTile]
  float* factors() const { return factors_.get(); }  // [max_rows]

 private:
  hwy::AlignedFreeUniquePtr<float[]> keys_, values_, scores_, factors_;
};

// Adds the tail tokens each row sees to its softmax state.
void prefill_tail_block(const PrefillBlock& block, const PrefillScratch& scratch);

}  // namespace cocktail::cpu
