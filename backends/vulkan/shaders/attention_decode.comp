#version 450
// Decode attention over a layer's mixed segments and its tail: workgroup (range, KV head ·
// batches + batch) walks range `range` of the KV head's tiles in storage order (each
// segment's segment, then the tail cut into tiles of group_size rows) for one batch of the
// GQA group's query heads, and leaves each head's partial softmax state (m, l, unnormalised o)
// for attention_merge.comp. Every code loaded serves all heads of the batch.
//
// A tile goes CHUNK tokens a step. Keys: SLICES invocations a token, each dotting runs of 4
// channels of the row with the query; their sums meet in shared memory. Keys per channel fold
// the constants out (docs/architecture.md, "Folding the quantization constants out"): per tile
// q'_c = q_c·s_c and q_c·z_c are made once, so score_t = Σ_c (q'_c·k̂_{t,c} + q_c·z_c). Keys per
// token weight each run's raw dot by its group's scale and add zero · Σ q. The online softmax
// of a head is one invocation's (m and l stay in its registers); values: each invocation owns
// a run of 4 channels and a phase of the chunk's tokens, dequantizes the run and adds it to
// every head's output. Scores are in base 2 (the query carries log2 e).
#include "workgroup.glsl"

layout(push_constant) uniform Push {
  uint head_dim;
  uint group_size;  // tokens of a tile, the tail's tiles too
  uint key_axis;
  uint value_axis;
  uint group;  // query heads per KV head
  uint batch_heads;
  uint batches;
  uint tiles;  // per KV head: every segment's, then the tail's
  uint splits;
  uint tail_rows;
  uint tail_capacity;
  uint q_first;
  uint n_q_heads;
  float scale;  // softmax_scale · log2(e)
  uint n_tiles[5];
} p;

#include "attention_store.glsl"

layout(std430, binding = 12) readonly buffer Query { float q[]; };
// m [n_q_heads][splits], then l the same, then o [n_q_heads][splits][head_dim].
layout(std430, binding = 13) writeonly buffer Partials { float partials[]; };

#define MAX_HEADS 8u
#define MAX_DIM 256u
#define CHUNK 32u
#define SLICES (WG / CHUNK)
// Below every score, and finite: infinities need not survive arithmetic on every device.
#define LOWEST (-3.0e38)

shared float query[MAX_HEADS * MAX_DIM];   // scaled, [head][channel]
shared float folded[MAX_HEADS * MAX_DIM];  // q·s of the tile's key scales
shared float qz[MAX_HEADS * MAX_DIM];      // q·z of the tile's key zeros
shared float key_dots[MAX_HEADS * WG];     // [head][invocation]
shared float scores[MAX_HEADS * CHUNK];
shared float weights[MAX_HEADS * CHUNK];
shared float rescale[MAX_HEADS];

uint heads;
uint kv_head;
// The invocation's value run and token phase.
uint runs;
uint phases;
uint own_run;
uint phase;
// The softmax state of head gl_LocalInvocationIndex (< heads) and every head's outputs.
float running_max = LOWEST;
float running_sum = 0.0;
vec4 acc[MAX_HEADS];

vec4 query4(uint h, uint c) {
  const uint at = h * p.head_dim + c;
  return vec4(query[at], query[at + 1u], query[at + 2u], query[at + 3u]);
}
vec4 folded4(uint h, uint c) {
  const uint at = h * p.head_dim + c;
  return vec4(folded[at], folded[at + 1u], folded[at + 2u], folded[at + 3u]);
}
vec4 qz4(uint h, uint c) {
  const uint at = h * p.head_dim + c;
  return vec4(qz[at], qz[at + 1u], qz[at + 2u], qz[at + 3u]);
}

// One tile: keys of format kf at byte kblock of source ksrc, values of format vf at vblock of
// vsrc, `valid` tokens in use.
void walk_tile(BlockFormat kf, uint ksrc, uint kblock, BlockFormat vf, uint vsrc, uint vblock,
               uint valid) {
  const uint tid = gl_LocalInvocationIndex;
  const uint dim = p.head_dim;
  const bool quantized = kf.precision_ != PRECISION_FP16;
  const bool fold = quantized && kf.axis == AXIS_PER_CHANNEL;
  const bool key_per_token = quantized && kf.axis == AXIS_PER_TOKEN;
  const bool value_per_channel = quantized && vf.axis == AXIS_PER_CHANNEL;
  if (fold) {
    for (uint i = tid; i < heads * dim; i += WG) {
      const uint c = i % dim;
      const float s = source_half(ksrc, kblock + scales_offset(kf) + 2u * c);
      const float z = has_zeros(kf) ? source_half(ksrc, kblock + zeros_offset(kf) + 2u * c) : 0.0;
      folded[i] = query[i] * s;
      qz[i] = query[i] * z;
    }
    barrier();
  }
  // The tile is one per-channel group of values: the run's constants hold for every token.
  vec4 channel_scale = vec4(1.0);
  vec4 channel_zero = vec4(0.0);
  if (value_per_channel && phase < phases) {
    for (uint i = 0u; i < 4u; ++i) {
      const uint g = 2u * (4u * own_run + i);
      channel_scale[i] = source_half(vsrc, vblock + scales_offset(vf) + g);
      channel_zero[i] = has_zeros(vf) ? source_half(vsrc, vblock + zeros_offset(vf) + g) : 0.0;
    }
  }

  for (uint first = 0u; first < valid; first += CHUNK) {
    const uint n = min(CHUNK, valid - first);
    // Keys: invocation (token kt, slice ks) dots runs ks, ks + SLICES, ... of its row.
    const uint kt = tid / SLICES;
    const uint ks = tid % SLICES;
    float d[MAX_HEADS];
    for (uint h = 0u; h < MAX_HEADS; ++h) d[h] = 0.0;
    if (kt < n) {
      const uint token = first + kt;
      const uint row = kblock + token * row_bytes(kf);
      for (uint r = ks; r < dim / 4u; r += SLICES) {
        const vec4 k = run_codes(ksrc, kf.precision_, dim, row, r);
        const uint c = 4u * r;
        if (fold) {
          for (uint h = 0u; h < MAX_HEADS; ++h) {
            if (h < heads) d[h] += dot(folded4(h, c), k) + dot(qz4(h, c), vec4(1.0));
          }
        } else if (key_per_token) {
          const uint g = 2u * scale_index(kf, token, c);
          const float s = source_half(ksrc, kblock + scales_offset(kf) + g);
          const float z = has_zeros(kf) ? source_half(ksrc, kblock + zeros_offset(kf) + g) : 0.0;
          for (uint h = 0u; h < MAX_HEADS; ++h) {
            if (h < heads) {
              const vec4 qv = query4(h, c);
              d[h] += s * dot(qv, k) + z * dot(qv, vec4(1.0));
            }
          }
        } else {
          for (uint h = 0u; h < MAX_HEADS; ++h) {
            if (h < heads) d[h] += dot(query4(h, c), k);
          }
        }
      }
    }
    for (uint h = 0u; h < MAX_HEADS; ++h) {
      if (h < heads) key_dots[h * WG + tid] = d[h];
    }
    barrier();
    for (uint i = tid; i < heads * CHUNK; i += WG) {
      const uint h = i / CHUNK;
      const uint t = i % CHUNK;
      float s = 0.0;
      for (uint j = 0u; j < SLICES; ++j) s += key_dots[h * WG + t * SLICES + j];
      scores[i] = t < n ? s : LOWEST;
    }
    barrier();
    // The online-softmax step of head tid; padding rows (t >= n) get weight 0.
    if (tid < heads) {
      float top = running_max;
      for (uint t = 0u; t < n; ++t) top = max(top, scores[tid * CHUNK + t]);
      const float f = exp2(running_max - top);
      float sum = 0.0;
      for (uint t = 0u; t < CHUNK; ++t) {
        const float w = t < n ? exp2(scores[tid * CHUNK + t] - top) : 0.0;
        weights[tid * CHUNK + t] = w;
        sum += w;
      }
      running_sum = running_sum * f + sum;
      running_max = top;
      rescale[tid] = f;
    }
    barrier();
    // Values: the invocation's run of every token of its phase.
    if (phase < phases) {
      for (uint h = 0u; h < MAX_HEADS; ++h) {
        if (h < heads) acc[h] *= rescale[h];
      }
      for (uint t = phase; t < n; t += phases) {
        const uint token = first + t;
        vec4 v = run_codes(vsrc, vf.precision_, dim, vblock + token * row_bytes(vf), own_run);
        if (value_per_channel) {
          v = vf.precision_ == PRECISION_NF4 ? channel_scale * v : fma(channel_scale, v, channel_zero);
        } else if (vf.precision_ != PRECISION_FP16) {
          const uint g = 2u * scale_index(vf, token, 4u * own_run);
          const float s = source_half(vsrc, vblock + scales_offset(vf) + g);
          const float z = has_zeros(vf) ? source_half(vsrc, vblock + zeros_offset(vf) + g) : 0.0;
          v = vf.precision_ == PRECISION_NF4 ? s * v : fma(vec4(s), v, vec4(z));
        }
        for (uint h = 0u; h < MAX_HEADS; ++h) {
          if (h < heads) acc[h] += weights[h * CHUNK + t] * v;
        }
      }
    }
  }
}

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint dim = p.head_dim;
  const uint range = gl_WorkGroupID.x;
  kv_head = gl_WorkGroupID.y / p.batches;
  const uint batch = gl_WorkGroupID.y % p.batches;
  const uint first_head = kv_head * p.group + batch * p.batch_heads;
  heads = min(p.batch_heads, p.group - batch * p.batch_heads);
  runs = dim / 4u;
  phases = WG / runs;
  own_run = tid % runs;
  phase = tid / runs;
  for (uint h = 0u; h < MAX_HEADS; ++h) acc[h] = vec4(0.0);
  for (uint i = tid; i < heads * dim; i += WG) {
    query[i] = q[p.q_first + first_head * dim + i] * p.scale;
  }
  barrier();

  // Range r is [r·(tiles/splits) + min(r, tiles % splits), ...): every tile once, in order.
  const uint base = p.tiles / p.splits;
  const uint extra = p.tiles % p.splits;
  const uint begin = range * base + min(range, extra);
  const uint end = begin + base + (range < extra ? 1u : 0u);
  const uint tile_tokens = p.group_size;
  for (uint i = begin; i < end; ++i) {
    // Tile i in storage order: tile t of a segment, or of the tail.
    uint segment = 0u;
    uint t = i;
    while (segment < 5u && t >= p.n_tiles[segment]) {
      t -= p.n_tiles[segment];
      ++segment;
    }
    // Tail rows are FP16 token-major rows like an FP16 tile's codes, without constants.
    BlockFormat kf = BlockFormat(PRECISION_FP16, AXIS_PER_CHANNEL, tile_tokens, dim, tile_tokens);
    BlockFormat vf = kf;
    uint key_source = SOURCE_TAIL;
    uint value_source = SOURCE_TAIL_VALUES;
    uint keys = (kv_head * p.tail_capacity + t * tile_tokens) * dim * 2u;
    uint values = keys;
    uint valid = min(tile_tokens, p.tail_rows - t * tile_tokens);
    if (segment < 5u) {
      kf = BlockFormat(segment, p.key_axis, tile_tokens, dim, p.group_size);
      vf = BlockFormat(segment, p.value_axis, tile_tokens, dim, p.group_size);
      key_source = segment;
      value_source = segment;
      keys = (kv_head * p.n_tiles[segment] + t) * (block_bytes(kf) + block_bytes(vf));
      values = keys + block_bytes(kf);
      valid = uint(tile_valid(segment, t));
    }
    walk_tile(kf, key_source, keys, vf, value_source, values, valid);
  }

  const uint states = p.n_q_heads * p.splits;
  if (tid < heads) {
    const uint state = (first_head + tid) * p.splits + range;
    partials[state] = running_max;
    partials[states + state] = running_sum;
  }
  // Each head's output: the phases' sums of a run meet in shared memory.
  for (uint h = 0u; h < MAX_HEADS; ++h) {
    if (h >= heads) break;
    barrier();
    if (phase < phases) {
      for (uint i = 0u; i < 4u; ++i) folded[tid * 4u + i] = acc[h][i];
    }
    barrier();
    if (tid < runs) {
      vec4 o = vec4(0.0);
      for (uint ph = 0u; ph < phases; ++ph) {
        const uint at = (ph * runs + tid) * 4u;
        o += vec4(folded[at], folded[at + 1u], folded[at + 2u], folded[at + 3u]);
      }
      const uint out_at = 2u * states + ((first_head + h) * p.splits + range) * dim + 4u * tid;
      for (uint i = 0u; i < 4u; ++i) partials[out_at + i] = o[i];
    }
  }
}
