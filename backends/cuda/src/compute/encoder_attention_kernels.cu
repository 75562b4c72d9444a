#include "compute/encoder_attention_kernels.cuh"
#include "compute/kernel_launch.cuh"
#include "compute/reduce.cuh"

namespace cocktail::gpu {
namespace {

// A block: a tile of kEncoderQueriesPerTile queries of one head, kLanesPerQuery lanes each (a
// lane takes every kLanesPerQuery-th dimension); keys and values pass through shared memory
// kKeysPerChunk at a time.
constexpr int kLanesPerQuery = 4;
constexpr int kKeysPerChunk = 32;
constexpr int kAttentionThreads = kEncoderQueriesPerTile * kLanesPerQuery;
static_assert(kAttentionThreads % 64 == 0);

// kMaxHeadDim bounds head_dim: each lane keeps kMaxHeadDim / kLanesPerQuery dimensions of its
// query and its output in registers.
template <int kMaxHeadDim>
__global__ void __launch_bounds__(kAttentionThreads)
    encoder_attention_kernel(EncoderLaunch tiles, const float* __restrict__ q,
                             const float* __restrict__ k, const float* __restrict__ v, int n_heads,
                             int head_dim, float scale, float* __restrict__ out) {
  constexpr int kDims = kMaxHeadDim / kLanesPerQuery;
  float* keys = dynamic_shared_floats();  // [kKeysPerChunk][head_dim], then the values
  float* values = keys + kKeysPerChunk * head_dim;

  const EncoderTile tile = tiles.tiles[blockIdx.x];
  const long long stride = (long long)n_heads * head_dim;
  const long long head_offset = (long long)blockIdx.y * head_dim;
  const int query = tile.first_query + int(threadIdx.x) / kLanesPerQuery;
  const int part = int(threadIdx.x) % kLanesPerQuery;
  // Lanes past the sequence's end still load chunks and take part in the shuffles.
  const bool active = query < tile.length;

  float qs[kDims];
  float acc[kDims];
  const float* q_row = q + ((long long)tile.first_token + query) * stride + head_offset;
#pragma unroll
  for (int d = 0; d < kDims; ++d) {
    const int e = part + kLanesPerQuery * d;
    qs[d] = active && e < head_dim ? q_row[e] * scale : 0.0f;
    acc[d] = 0.0f;
  }
  float running_max = -INFINITY;
  float running_sum = 0.0f;

  for (int key0 = 0; key0 < tile.length; key0 += kKeysPerChunk) {
    const int keys_here = min(kKeysPerChunk, tile.length - key0);
    __syncthreads();  // every lane is done with the previous chunk
    for (int i = int(threadIdx.x); i < kKeysPerChunk * head_dim; i += kAttentionThreads) {
      const int key = i / head_dim;
      const long long at =
          ((long long)tile.first_token + key0 + key) * stride + head_offset + i % head_dim;
      keys[i] = key < keys_here ? k[at] : 0.0f;
      values[i] = key < keys_here ? v[at] : 0.0f;
    }
    __syncthreads();

    float s[kKeysPerChunk];
    float chunk_max = -INFINITY;
#pragma unroll
    for (int key = 0; key < kKeysPerChunk; ++key) {
      float partial = 0.0f;
#pragma unroll
      for (int d = 0; d < kDims; ++d) {
        const int e = part + kLanesPerQuery * d;
        if (e < head_dim) partial = fmaf(qs[d], keys[key * head_dim + e], partial);
      }
      const float score = lanes_sum<kLanesPerQuery>(partial);
      s[key] = key < keys_here ? score : -INFINITY;
      chunk_max = fmaxf(chunk_max, s[key]);
    }
    // The chunk has a key, so the new maximum is finite; the first chunk's correction is
    // exp(−inf) = 0, on a sum and outputs that are still 0.
    const float new_max = fmaxf(running_max, chunk_max);
    const float correction = expf(running_max - new_max);
    float chunk_sum = 0.0f;
#pragma unroll
    for (int key = 0; key < kKeysPerChunk; ++key) {
      s[key] = expf(s[key] - new_max);
      chunk_sum += s[key];
    }
    running_sum = running_sum * correction + chunk_sum;
    running_max = new_max;
#pragma unroll
    for (int d = 0; d < kDims; ++d) {
      const int e = part + kLanesPerQuery * d;
      float o = acc[d] * correction;
      if (e < head_dim) {
#pragma unroll
        for (int key = 0; key < kKeysPerChunk; ++key)
          o = fmaf(s[key], values[key * head_dim + e], o);
      }
      acc[d] = o;
    }
  }

  if (!active) return;
  float* out_row = out + ((long long)tile.first_token + query) * stride + head_offset;
#pragma unroll
  for (int d = 0; d < kDims; ++d) {
    const int e = part + kLanesPerQuery * d;
    if (e < head_dim) out_row[e] = acc[d] / running_sum;
  }
}

template <int kMaxHeadDim>
void launch_tiles(cudaStream_t stream, const EncoderLaunch& launch, const float* q, const float* k,
                  const float* v, int n_heads, int head_dim, float scale, float* out) {
  const dim3 grid(unsigned(launch.count), unsigned(n_heads));
  const std::size_t shared = 2 * std::size_t(kKeysPerChunk) * std::size_t(head_dim) * sizeof(float);
  launch_kernel("encoder_attention_kernel", encoder_attention_kernel<kMaxHeadDim>, grid,
                kAttentionThreads, shared, stream, launch, q, k, v, n_heads, head_dim, scale, out);
}

}  // namespace

void launch_encoder_attention(cudaStream_t stream, const EncoderLaunch& launch, const float* q,
                              const float* k, const float* v, int n_heads, int head_dim,
                              float scale, float* out) {
  if (launch.count == 0) return;
  // MiniLM's and BERT's heads (32, 64) take the smaller register footprint.
  if (head_dim <= 64) {
    launch_tiles<64>(stream, launch, q, k, v, n_heads, head_dim, scale, out);
  } else {
    launch_tiles<kEncoderMaxHeadDim>(stream, launch, q, k, v, n_heads, head_dim, scale, out);
  }
}

}  // namespace cocktail::gpu
