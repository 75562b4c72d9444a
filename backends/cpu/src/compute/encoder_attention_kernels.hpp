#pragma once

#include <cstddef>
#include <cstdint>

namespace cocktail::cpu {

// One head of one sequence of an encoder's unmasked self-attention: out[i] = Σ_j p_ij v[j]
// with p_i = softmax_j(scale · q[i]·k[j]) over the sequence's `length` tokens. q, k, v and out
// point at the head's slice of the sequence's first token; consecutive tokens are `stride`
// floats apart. `scratch` holds encoder_attention_scratch(length, head_dim) floats.
void encoder_attention_head(const float* q, const float* k, const float* v, float* out,
                            std::int64_t length, std::int64_t stride, int head_dim, float scale,
                            float* scratch);

// Keys are transposed into rows padded to a whole number of the widest vector (16 floats), so
// the score loop runs over full vectors; the padding's scores are never read.
constexpr std::int64_t encoder_attention_width(std::int64_t length) {
  return (length + 15) / 16 * 16;
}

// Floats of scratch encoder_attention_head needs for sequences up to `max_length` tokens.
std::size_t encoder_attention_scratch(std::int64_t max_length, int head_dim);

}  // namespace cocktail::cpu
