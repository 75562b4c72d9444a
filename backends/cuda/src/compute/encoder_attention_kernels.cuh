#pragma once

// encoder_attention's kernel: unmasked softmax attention inside each sequence of a batch laid
// end to end, per head, with an online softmax over chunks of keys. Launches checked.

#include <cstdint>

#include "compute/encoder_tiles.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

// The largest head_dim the kernel takes.
inline constexpr int kEncoderMaxHeadDim = 128;

// q, k, v and out are device floats [tokens][n_heads · head_dim] (head_dim at most
// kEncoderMaxHeadDim); `launch` names a part of the batch's tiles (compute/encoder_tiles.hpp).
void launch_encoder_attention(cudaStream_t stream, const EncoderLaunch& launch, const float* q,
                              const float* k, const float* v, int n_heads, int head_dim,
                              float scale, float* out);

}  // namespace cocktail::gpu
