#pragma once

// What GpuAttention (gpu_attention.cu) hands the attention kernels (decode.cu, merge.cu,
// prefill.cu, mass.cu): plain parameter structs passed to the kernels by value, and the host
// functions that launch them. Scores are kept in base 2: the query is scaled by
// softmax_scale · log2(e) once, and every exponential is an exp2.

#include <cstddef>
#include <cstdint>

#include "gpu_common/decode_split.hpp"
#include "kv/store_view.hpp"
#include "runtime/gpu_device.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

inline constexpr float kLog2e = 1.4426950408889634f;

// The partial softmax states of a decode step, one per (query head, range):
// m[head · splits + range] (the running maximum, base 2), l (the sum of 2^(score - m)) and
// o[(head · splits + range) · head_dim + channel] (the unnormalised output).
struct DecodePartials {
  float* m = nullptr;
  float* l = nullptr;
  float* o = nullptr;
};

struct DecodeParams {
  StoreView view;
  int layer = 0;
  int tile_tokens = 32;        // tokens of a tile (group_size), the tail's tiles too
  std::int64_t tail_rows = 0;  // rows of the layer's tail
  const float* q = nullptr;    // [n_q_heads][head_dim]
  float scale = 0.0f;          // softmax_scale · log2(e)
  int group = 1;               // query heads per KV head
  int batch_heads = 1;         // query heads per block (HeadBatches::heads)
  std::int64_t tiles = 0;      // per KV head (DecodeSplit::tiles)
  int splits = 1;              // ranges per (KV head, head batch)
  DecodePartials partials;
};

// The decode kernel of a plan: which instantiation (heads per block, channels per lane), its
// shared memory, and how many of its blocks the GPU holds at once.
struct DecodeKernel {
  int index = 0;
  std::size_t shared_bytes = 0;
  int resident_blocks = 1;
};

// Picks the decode kernel for batches of batch_heads query heads of head_dim channels and lets
// it use the shared memory it needs (once per plan). An Error naming decode when head_dim is
// over 256 or the device has too little shared memory.
DecodeKernel prepare_decode(int batch_heads, int head_dim, const GpuDevice& device);

// One block per (block of ranges, KV head, head batch): every range's partial states.
void launch_decode(const DecodeKernel& kernel, const DecodeSplit& split, int n_kv_heads,
                   const DecodeParams& params, cudaStream_t stream);

// Merges each query head's `splits` partial states by log-sum-exp into out[head][head_dim].
void launch_merge(const DecodePartials& partials, int n_q_heads, int splits, int head_dim,
                  float* out, cudaStream_t stream);

struct PrefillParams {
  StoreView view;
  int layer = 0;
  int tile_tokens = 32;        // tokens of a segment tile (group_size)
  std::int64_t tail_rows = 0;  // rows of the layer's tail; the queries are its last n_new
  const float* q = nullptr;    // [n_new][n_q_heads · head_dim]
  float* out = nullptr;        // the same shape
  std::int64_t n_new = 0;
  int group = 1;       // query heads per KV head
  float scale = 0.0f;  // softmax_scale · log2(e)
};

// Causal attention of the n_new queries over the layer's segments and its tail. An Error naming
// prefill when the device has too little shared memory for head_dim.
void launch_prefill(const PrefillParams& params, const GpuDevice& device, cudaStream_t stream);

struct MassParams {
  TailView tail;
  int layer = 0;
  int n_kv_heads = 1;
  int head_dim = 0;
  std::int64_t n_tokens = 0;  // rows of the layer's tail, all of its tokens
  const float* q = nullptr;   // [n_query][n_q_heads · head_dim]
  std::int64_t n_query = 0;
  int n_q_heads = 1;
  int group = 1;
  float scale = 0.0f;     // softmax_scale · log2(e)
  float* mass = nullptr;  // [n_q_heads][n_tokens]
};

// Fills `mass` with the summed causal softmax weights of the last n_query tokens.
void launch_attention_mass(const MassParams& params, cudaStream_t stream);

}  // namespace cocktail::gpu
