#pragma once

#include <cstdint>

#include "kv_store.hpp"

namespace cocktail::cpu {

// One thread's share of decode attention: the query heads of one KV head over a contiguous
// range of that head's tiles (segment tiles in storage order, then the FP16 tail cut into
// tiles of the same size). The result is a partial softmax state, merged by the caller.
struct RangeTask {
  const HeadView* head = nullptr;
  const float* q = nullptr;  // [n_heads][head_dim], pre-multiplied by the softmax scale
  int n_heads = 0;           // query heads sharing this KV head (the GQA group)
  int head_dim = 0;
  int tile_tokens = 0;
  std::int64_t begin = 0;         // first tile of the range
  std::int64_t end = 0;           // one past the last
  std::int64_t tail_visible = 0;  // tail tokens the query sees (all of them when decoding)
  // Partial state, initialised by the caller to m = -inf, l = 0, o = 0.
  float* m = nullptr;  // [n_heads] running max of the scores
  float* l = nullptr;  // [n_heads] sum of exp(score - m)
  float* o = nullptr;  // [n_heads][head_dim] sum of exp(score - m) · v
};

// Tiles of a head: every segment's tiles, then ceil(tail_visible / tile_tokens) tail tiles.
std::int64_t count_tiles(const HeadView& head, std::int64_t tail_visible, int tile_tokens);

// Runs the task with the best SIMD target this CPU supports (chosen once, at first call).
void attend_range(const RangeTask& task);

// The SIMD target attend_range uses here, for reports ("AVX3", "AVX2", ...).
const char* simd_target_name();

// Whether attend_range, on that target, dots lane-packed INT4 / INT2 tiles as 16-bit integers
// against the query and the probabilities rounded to 16 bits (else it converts codes to floats).
bool integer_lane_dots();

}  // namespace cocktail::cpu
