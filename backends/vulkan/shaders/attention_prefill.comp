#version 450
// Causal prefill attention in FP32, tiled with the online softmax: workgroup (block, KV head)
// takes ROWS rows of the new tokens × the query heads of the KV head's GQA group (row r: token
// r / group, head r % group), so each key chunk is dequantized once for every head of the
// group. Keys and values come `chunk` at a time into shared memory as floats: first every
// committed segment tile (all before the queries, so unmasked but for the padding rows), then
// the tail up to the last row's own position, masked where it crosses the diagonal. Scores are
// in base 2 (the query carries log2 e).
#include "workgroup.glsl"

layout(push_constant) uniform Push {
  uint head_dim;
  uint group_size;
  uint key_axis;
  uint value_axis;
  uint group;      // query heads per KV head
  uint n_q_heads;
  uint n_new;      // new tokens: the last n_new rows of the tail
  uint tail_rows;
  uint tail_capacity;
  uint chunk;      // keys a step: KV_FLOATS / head_dim, at most MAX_CHUNK
  uint q_first;
  uint out_first;
  float scale;     // softmax_scale · log2(e)
  uint n_tiles[5];
} p;

#include "attention_store.glsl"

layout(std430, binding = 12) readonly buffer Query { float q[]; };
layout(std430, binding = 13) writeonly buffer Out { float out_[]; };

#define ROWS 8u
#define MAX_DIM 256u
#define MAX_CHUNK 32u
#define KV_FLOATS 2048u
#define CHANNEL_LANES (WG / ROWS)
#define MAX_OWNED (MAX_DIM / CHANNEL_LANES)
#define LOWEST (-3.0e38)

shared float queries[ROWS * MAX_DIM];
shared float keys[KV_FLOATS];
shared float values[KV_FLOATS];
shared float weights[ROWS * MAX_CHUNK];
shared float rescale[ROWS];
shared float inverse_sum[ROWS];

uint n_rows;
uint first_row;
// Tail rows before the first query.
uint earlier;
// Row tid's softmax state (tid < ROWS) and the invocation's outputs: row tid / CHANNEL_LANES,
// channels tid % CHANNEL_LANES + CHANNEL_LANES·k.
float running_max = LOWEST;
float running_sum = 0.0;
float o[MAX_OWNED];

// Tail rows row r of the block sees (0 past the last row).
uint row_limit(uint r) {
  const uint row = first_row + r;
  return row < n_rows ? earlier + row / p.group + 1u : 0u;
}

// Whether row r sees key j of a chunk of n keys; tail_first is the tail row of the chunk's first
// key, or -1 for a segment chunk.
bool visible(uint r, uint j, uint n, int tail_first) {
  if (j >= n || first_row + r >= n_rows) return false;
  return tail_first < 0 || uint(tail_first) + j < row_limit(r);
}

void attend_chunk(uint n, int tail_first) {
  const uint tid = gl_LocalInvocationIndex;
  const uint dim = p.head_dim;
  for (uint i = tid; i < ROWS * p.chunk; i += WG) {
    const uint r = i / p.chunk;
    const uint j = i % p.chunk;
    float s = 0.0;
    for (uint c = 0u; c < dim; ++c) s += queries[r * dim + c] * keys[j * dim + c];
    weights[r * MAX_CHUNK + j] = s;
  }
  barrier();
  if (tid < ROWS) {
    float top = running_max;
    for (uint j = 0u; j < p.chunk; ++j) {
      if (visible(tid, j, n, tail_first)) top = max(top, weights[tid * MAX_CHUNK + j]);
    }
    const float f = exp2(running_max - top);
    float sum = 0.0;
    for (uint j = 0u; j < p.chunk; ++j) {
      const uint at = tid * MAX_CHUNK + j;
      const float w = visible(tid, j, n, tail_first) ? exp2(weights[at] - top) : 0.0;
      weights[at] = w;
      sum += w;
    }
    running_sum = running_sum * f + sum;
    running_max = top;
    rescale[tid] = f;
  }
  barrier();
  const uint r = tid / CHANNEL_LANES;
  const uint lane = tid % CHANNEL_LANES;
  for (uint k = 0u; k < MAX_OWNED; ++k) {
    const uint c = lane + CHANNEL_LANES * k;
    if (c < dim) {
      float sum = o[k] * rescale[r];
      for (uint j = 0u; j < n; ++j) sum += weights[r * MAX_CHUNK + j] * values[j * dim + c];
      o[k] = sum;
    }
  }
  barrier();  // every invocation is done with the chunk before the next one is loaded
}

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint dim = p.head_dim;
  const uint kv_head = gl_WorkGroupID.y;
  n_rows = p.n_new * p.group;
  first_row = gl_WorkGroupID.x * ROWS;
  earlier = p.tail_rows - p.n_new;
  for (uint k = 0u; k < MAX_OWNED; ++k) o[k] = 0.0;
  for (uint i = tid; i < ROWS * dim; i += WG) {
    const uint row = first_row + i / dim;
    float x = 0.0;
    if (row < n_rows) {
      const uint head = kv_head * p.group + row % p.group;
      x = q[p.q_first + (row / p.group * p.n_q_heads + head) * dim + i % dim] * p.scale;
    }
    queries[i] = x;
  }
  barrier();

  const uint runs = dim / 4u;
  for (uint segment = 0u; segment < 5u; ++segment) {
    const uint count = p.n_tiles[segment];
    const BlockFormat kf = BlockFormat(segment, p.key_axis, p.group_size, dim, p.group_size);
    const BlockFormat vf = BlockFormat(segment, p.value_axis, p.group_size, dim, p.group_size);
    const uint key_bytes = block_bytes(kf);
    const uint tile_bytes = key_bytes + block_bytes(vf);
    for (uint t = 0u; t < count; ++t) {
      const uint at = (kv_head * count + t) * tile_bytes;
      const uint valid = uint(tile_valid(segment, t));
      for (uint first = 0u; first < valid; first += p.chunk) {
        const uint n = min(p.chunk, valid - first);
        for (uint i = tid; i < p.chunk * runs; i += WG) {
          const uint j = i / runs;
          const uint run = i % runs;
          const bool live = j < n;
          const vec4 k = live ? dequantize_run(kf, at, first + j, run) : vec4(0.0);
          const vec4 v = live ? dequantize_run(vf, at + key_bytes, first + j, run) : vec4(0.0);
          for (uint e = 0u; e < 4u; ++e) {
            keys[j * dim + 4u * run + e] = k[e];
            values[j * dim + 4u * run + e] = v[e];
          }
        }
        barrier();
        attend_chunk(n, -1);
      }
    }
  }

  const uint last_row = min(first_row + ROWS, n_rows) - 1u;
  const uint seen = earlier + last_row / p.group + 1u;  // tail rows the last row sees
  const uint head_half = kv_head * p.tail_capacity * dim;
  for (uint first = 0u; first < seen; first += p.chunk) {
    const uint n = min(p.chunk, seen - first);
    for (uint i = tid; i < p.chunk * dim; i += WG) {
      const uint j = i / dim;
      const uint at = 2u * (head_half + (first + j) * dim + i % dim);
      keys[i] = j < n ? source_half(SOURCE_TAIL, at) : 0.0;
      values[i] = j < n ? source_half(SOURCE_TAIL_VALUES, at) : 0.0;
    }
    barrier();
    attend_chunk(n, int(first));
  }

  if (tid < ROWS) inverse_sum[tid] = running_sum > 0.0 ? 1.0 / running_sum : 0.0;
  barrier();
  const uint r = tid / CHANNEL_LANES;
  const uint row = first_row + r;
  if (row < n_rows) {
    const uint head = kv_head * p.group + row % p.group;
    const uint base = p.out_first + (row / p.group * p.n_q_heads + head) * dim;
    for (uint k = 0u; k < MAX_OWNED; ++k) {
      const uint c = tid % CHANNEL_LANES + CHANNEL_LANES * k;
      if (c < dim) out_[base + c] = o[k] * inverse_sum[r];
    }
  }
}
