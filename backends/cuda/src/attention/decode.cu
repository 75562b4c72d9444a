// Decode attention over the mixed segments and the tail of one layer, in one launch: a block
// per (range block, KV head, head batch), each of its warps walking one range of the KV head's
// tiles for every query head of the batch, leaving one partial softmax state per head
// (gpu_common/decode_split.hpp; merged by merge.cu).
//
// A warp takes a tile 32 tokens at a time. For the keys each lane is one token and reads its
// row with 16-byte loads, dotting the raw codes with a query vector in shared memory; for the
// values each lane owns a run of 4 channels (8 for head_dim over 128) and reads them from every
// token's row. The quantization constants stay out of those loops (docs/architecture.md,
// "Folding the quantization constants out"):
//
// - keys per channel: q'_c = q_c·s_c into shared memory and bias = Σ_c q_c·z_c once per tile,
//   then score_t = Σ_c q'_c·k̂_{t,c} + bias;
// - keys per token: score_t = Σ_slices (s_{g,t}·Σ_{c in slice} q_c·k̂_{t,c} + z_{g,t}·Σ q_c), the
//   query's slice sums made once per block;
// - values per token: o_c += Σ_t (p_t·s_{g,t})·v̂_{t,c}, with one zero term Σ_t p_t·z_{g,t} per
//   lane and head, rescaled with o and added at the end;
// - values per channel: each code dequantized with its channel's constants, staged in shared
//   memory once per tile.
//
// The online softmax keeps one maximum per head (the same in every lane) and a per-lane sum,
// reduced once at the range's end.

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

#include "attention/attention_kernels.hpp"
#include "attention/tile_rows.cuh"
#include "attention/warp_math.cuh"
#include "cocktail/error.hpp"
#include "kv/tile_codes.cuh"
#include "runtime/gpu_check.hpp"

namespace cocktail::gpu {

namespace {

constexpr int kThreads = kDecodeWarps * kLanes;
constexpr int kMaxDim = 256;
constexpr int kMaxSlices = kMaxDim / 32;
// Row stride of the per-token scale grids in shared memory: 33 puts the lanes that read one
// token's constants of different groups in different banks.
constexpr int kScaleStride = 33;

static_assert(int(Precision::fp16) == 0 && int(Precision::int8) == 1 && int(Precision::nf4) == 2 &&
                  int(Precision::int4) == 3 && int(Precision::int2) == 4,
              "segments are indexed by Precision, in storage order");

// The dynamic shared memory of a block, in floats: the scaled query of the batch, its slice
// sums and the NF4 levels for all warps, then each warp's own folded query, weights p, the
// tile's key bias per head, and its value constants (a [group][token] grid for values per
// token, [channel] for values per channel). Every part starts on a 16-byte boundary.
struct DecodeShared {
  int heads;
  int dim;

  COCKTAIL_HOST_DEVICE constexpr int query() const { return 0; }
  COCKTAIL_HOST_DEVICE constexpr int slice_sums() const { return heads * dim; }
  COCKTAIL_HOST_DEVICE constexpr int levels() const { return slice_sums() + heads * kMaxSlices; }
  COCKTAIL_HOST_DEVICE constexpr int scale_grid() const {
    return (dim / 32 * kScaleStride + 3) / 4 * 4;
  }
  COCKTAIL_HOST_DEVICE constexpr int bias() const { return (heads + 3) / 4 * 4; }
  COCKTAIL_HOST_DEVICE constexpr int per_warp() const {
    return heads * dim + heads * kLanes + bias() + 2 * scale_grid();
  }
  COCKTAIL_HOST_DEVICE constexpr int warp(int w) const { return levels() + 16 + w * per_warp(); }
  COCKTAIL_HOST_DEVICE constexpr std::size_t bytes() const {
    return std::size_t(warp(kDecodeWarps)) * sizeof(float);
  }
};

// One warp's walk over its range of tiles for kHeads query heads, with kGroups runs of 4
// value channels a lane.
template <int kHeads, int kGroups>
class RangeWalk {
  // Slices of 32 channels in a row, at most: head_dim up to 128 · kGroups.
  static constexpr int kSlices = 4 * kGroups;

 public:
  __device__ RangeWalk(const DecodeParams& p, const float* shared, float* warp_shared, int kv_head,
                       int lane)
      : p_(p),
        dim_(p.view.head_dim),
        lane_(lane),
        head_(std::size_t(p.layer) * std::size_t(p.view.n_kv_heads) + std::size_t(kv_head)),
        q_(shared),
        slice_sums_(shared + DecodeShared{kHeads, p.view.head_dim}.slice_sums()),
        levels_(shared + DecodeShared{kHeads, p.view.head_dim}.levels()),
        folded_(warp_shared),
        weights_(warp_shared + kHeads * p.view.head_dim),
        bias_(weights_ + kHeads * kLanes),
        value_scales_(bias_ + DecodeShared{kHeads, p.view.head_dim}.bias()),
        value_zeros_(value_scales_ + DecodeShared{kHeads, p.view.head_dim}.scale_grid()) {
    // Lanes own runs of 4 value channels. With head_dim 32 or 64 there are fewer runs than
    // lanes, so the lanes split the tokens into phases; beyond 128 a lane takes two runs.
    const int runs = dim_ / 4;
    phases_ = runs <= 16 && kLanes % runs == 0 ? kLanes / runs : 1;
    phase_ = phases_ > 1 ? lane / runs : 0;
#pragma unroll
    for (int j = 0; j < kGroups; ++j) {
      run_[j] = (phases_ > 1 ? lane % runs : lane) + kLanes * j;
      run_ok_[j] = run_[j] < runs;
    }
#pragma unroll
    for (int h = 0; h < kHeads; ++h) {
      m_[h] = kMinusInfinity;
      l_[h] = 0.0f;
#pragma unroll
      for (int i = 0; i < 4 * kGroups; ++i) acc_[h][i] = 0.0f;
#pragma unroll
      for (int j = 0; j < kGroups; ++j) zero_acc_[h][j] = 0.0f;
    }
  }

  // Tiles [begin, end) of the KV head in storage order: each segment's, then the tail's.
  __device__ void walk(std::int64_t begin, std::int64_t end) {
    std::int64_t start = 0;
    walk_segment<Precision::fp16>(start, begin, end);
    walk_segment<Precision::int8>(start, begin, end);
    walk_segment<Precision::nf4>(start, begin, end);
    walk_segment<Precision::int4>(start, begin, end);
    walk_segment<Precision::int2>(start, begin, end);
    walk_tail(start, begin, end);
  }

  // The partial states of query heads first_head .. first_head + n_heads - 1 for `range`.
  __device__ void write(int first_head, int n_heads, int range) {
    float l_total[kHeads];
#pragma unroll
    for (int h = 0; h < kHeads; ++h) l_total[h] = lanes_sum(l_[h]);
    // Lanes of one channel run in different token phases hold parts of the same sums.
    for (int offset = kLanes / phases_; offset < kLanes; offset *= 2) {
#pragma unroll
      for (int h = 0; h < kHeads; ++h) {
#pragma unroll
        for (int i = 0; i < 4 * kGroups; ++i) {
          acc_[h][i] += __shfl_xor_sync(kFullMask, acc_[h][i], offset, kLanes);
        }
#pragma unroll
        for (int j = 0; j < kGroups; ++j) {
          zero_acc_[h][j] += __shfl_xor_sync(kFullMask, zero_acc_[h][j], offset, kLanes);
        }
      }
    }
#pragma unroll
    for (int h = 0; h < kHeads; ++h) {
      const std::size_t state =
          std::size_t(first_head + h) * std::size_t(p_.splits) + std::size_t(range);
      if (h < n_heads && lane_ == 0) {
        p_.partials.m[state] = m_[h];
        p_.partials.l[state] = l_total[h];
      }
#pragma unroll
      for (int j = 0; j < kGroups; ++j) {
        if (h < n_heads && phase_ == 0 && run_ok_[j]) {
          const float z = zero_acc_[h][j];
          float4 o;
          o.x = acc_[h][4 * j] + z;
          o.y = acc_[h][4 * j + 1] + z;
          o.z = acc_[h][4 * j + 2] + z;
          o.w = acc_[h][4 * j + 3] + z;
          *reinterpret_cast<float4*>(p_.partials.o + state * std::size_t(dim_) +
                                     std::size_t(4 * run_[j])) = o;
        }
      }
    }
  }

 private:
  template <Precision P>
  __device__ void walk_segment(std::int64_t& start, std::int64_t begin, std::int64_t end) {
    const SegmentView& segment = p_.view.segments[int(P)];
    const std::int64_t first = begin > start ? begin : start;
    const std::int64_t last = end < start + segment.n_tiles ? end : start + segment.n_tiles;
    if (first < last) {
      const std::size_t tile_bytes = segment.format.bytes();
      const std::size_t values = segment.format.values_offset();
      const auto* head = reinterpret_cast<const unsigned char*>(segment.base) +
                         head_ * std::size_t(segment.n_tiles) * tile_bytes;
#pragma unroll 1
      for (std::int64_t i = first; i < last; ++i) {
        const std::int64_t t = i - start;
        const unsigned char* tile = head + std::size_t(t) * tile_bytes;
        walk_tile<P>(segment.format.keys, segment.format.values, tile, tile + values,
                     segment.valid[t]);
      }
    }
    start += segment.n_tiles;
  }

  __device__ void walk_tail(std::int64_t start, std::int64_t begin, std::int64_t end) {
    const int tokens = p_.tile_tokens;
    // Tail rows are FP16 token-major rows like an FP16 tile's codes, without constants.
    const BlockFormat rows{Precision::fp16, QuantAxis::per_channel, tokens, dim_, tokens};
    const std::size_t head_row = head_ * std::size_t(p_.view.tail.capacity);
#pragma unroll 1
    for (std::int64_t i = begin > start ? begin : start; i < end; ++i) {
      const std::int64_t row = (i - start) * tokens;
      const std::int64_t left = p_.tail_rows - row;
      const std::size_t at = (head_row + std::size_t(row)) * std::size_t(dim_);
      walk_tile<Precision::fp16>(rows, rows,
                                 reinterpret_cast<const unsigned char*>(p_.view.tail.keys + at),
                                 reinterpret_cast<const unsigned char*>(p_.view.tail.values + at),
                                 int(left < tokens ? left : tokens));
    }
  }

  // One tile of `valid` tokens: 32 at a time through keys, softmax and values.
  template <Precision P>
  __device__ void walk_tile(const BlockFormat& kf, const BlockFormat& vf, const unsigned char* keys,
                            const unsigned char* values, int valid) {
    const bool fold = P != Precision::fp16 && kf.axis == QuantAxis::per_channel;
    if (fold) fold_query(kf, keys);
    const bool values_per_channel = P != Precision::fp16 && vf.axis == QuantAxis::per_channel;
    if (values_per_channel) stage_channel_constants(vf, values);
#pragma unroll 1
    for (int first = 0; first < valid; first += kLanes) {
      const int n = valid - first < kLanes ? valid - first : kLanes;
      float score[kHeads];
      key_scores<P>(kf, keys, first, n, fold, score);
      if (P != Precision::fp16 && !values_per_channel) stage_token_constants(vf, values, first, n);
      softmax_step(score);
      __syncwarp();
      add_values<P>(vf, values, first, n, values_per_channel);
      __syncwarp();
    }
  }

  // q'_c = q_c·s_c and bias = Σ_c q_c·z_c of every head into the warp's shared memory. A tile
  // is one per-channel group (tokens == group_size), so channel c's constants are at index c.
  __device__ void fold_query(const BlockFormat& kf, const unsigned char* keys) {
    const unsigned char* scales = keys + kf.scales_offset();
    const unsigned char* zeros = keys + kf.zeros_offset();
    const bool has_zeros = kf.has_zeros();
    // The channel loop is unrolled to the largest head_dim, so that every load is in flight
    // before the first use.
    float bias[kHeads];
#pragma unroll
    for (int h = 0; h < kHeads; ++h) bias[h] = 0.0f;
#pragma unroll
    for (int k = 0; k < kSlices; ++k) {
      const int c = lane_ + kLanes * k;
      if (c < dim_) {
        const float s = half_at(scales + 2 * c);
        const float z = has_zeros ? half_at(zeros + 2 * c) : 0.0f;
#pragma unroll
        for (int h = 0; h < kHeads; ++h) {
          const float q = q_[h * dim_ + c];
          folded_[h * dim_ + c] = q * s;
          bias[h] = fmaf(q, z, bias[h]);
        }
      }
    }
#pragma unroll
    for (int h = 0; h < kHeads; ++h) {
      const float total = lanes_sum(bias[h]);
      if (lane_ == 0) bias_[h] = total;
    }
    __syncwarp();
  }

  // Scores of tokens first + lane; -inf past the tile's valid tokens. Keys per channel (and
  // FP16): the raw codes dotted with the folded query, plus the bias. Keys per token: each
  // 32-channel slice lies in one group, whose scale and zero for this token weight the slice's
  // raw dot product with the query and the query's slice sum. A lane loads kSlicesAhead slices
  // of its row before it uses the first.
  template <Precision P>
  __device__ void key_scores(const BlockFormat& kf, const unsigned char* keys, int first, int n,
                             bool folded, float (&score)[kHeads]) const {
    const bool live = lane_ < n;
    const int t = first + lane_;
    const unsigned char* row = keys + std::size_t(t) * kf.row_bytes();
    const bool per_token = P != Precision::fp16 && kf.axis == QuantAxis::per_token;
    const float* qv = folded ? folded_ : q_;
#pragma unroll
    for (int h = 0; h < kHeads; ++h) score[h] = folded ? bias_[h] : 0.0f;
    constexpr int kAhead = kSlicesAhead<P>;
    const int slices = dim_ / 32;
#pragma unroll 1
    for (int first_slice = 0; first_slice < slices; first_slice += kAhead) {
      SliceBytes<P> bytes[kAhead] = {};
#pragma unroll
      for (int k = 0; k < kAhead; ++k) {
        if (first_slice + k < slices) bytes[k] = load_slice<P>(row, first_slice + k, dim_, live);
      }
#pragma unroll
      for (int k = 0; k < kAhead; ++k) {
        const int s = first_slice + k;
        if (s < slices && !per_token) {
          dot_slice<P>(score, bytes[k], s, dim_, qv, dim_, levels_);
        } else if (s < slices) {
          add_token_slice<P>(kf, keys, live ? t : -1, s, bytes[k], score);
        }
      }
    }
    if (!live) {
#pragma unroll
      for (int h = 0; h < kHeads; ++h) score[h] = kMinusInfinity;
    }
  }

  // Keys per token: adds s_{g,t}·(the slice's raw dot product with the query) + z_{g,t}·(the
  // query's slice sum) for token t (-1: none, nothing added).
  template <Precision P>
  __device__ void add_token_slice(const BlockFormat& kf, const unsigned char* keys, int t, int s,
                                  const SliceBytes<P>& bytes, float (&score)[kHeads]) const {
    float d[kHeads];
#pragma unroll
    for (int h = 0; h < kHeads; ++h) d[h] = 0.0f;
    dot_slice<P>(d, bytes, s, dim_, q_, dim_, levels_);
    const std::size_t at = 2 * kf.scale_index(t < 0 ? 0 : t, 32 * s);
    const float scale = t < 0 ? 0.0f : half_at(keys + kf.scales_offset() + at);
    const float zero = t < 0 || !kf.has_zeros() ? 0.0f : half_at(keys + kf.zeros_offset() + at);
#pragma unroll
    for (int h = 0; h < kHeads; ++h) {
      score[h] = fmaf(scale, d[h], fmaf(zero, slice_sums_[h * kMaxSlices + s], score[h]));
    }
  }

  // Each token's value scales and zeros (per-token groups), widened once for every lane and
  // head: grid[group · kScaleStride + token].
  __device__ void stage_token_constants(const BlockFormat& vf, const unsigned char* values,
                                        int first, int n) {
    const bool live = lane_ < n;
    const int t = first + lane_;
    const unsigned char* scales = values + vf.scales_offset();
    const unsigned char* zeros = values + vf.zeros_offset();
    const int groups = vf.groups_per_token();
#pragma unroll
    for (int g = 0; g < kSlices; ++g) {
      if (g < groups) {
        const std::size_t at = 2 * vf.scale_index(live ? t : 0, g * vf.group_size);
        value_scales_[g * kScaleStride + lane_] = live ? half_at(scales + at) : 0.0f;
        value_zeros_[g * kScaleStride + lane_] =
            live && vf.has_zeros() ? half_at(zeros + at) : 0.0f;
      }
    }
  }

  // The tile's value constants per channel into the warp's shared memory (the tile is one
  // per-channel group: channel c's constants are at index c). The previous slice's readers
  // passed their last __syncwarp before any lane gets here.
  __device__ void stage_channel_constants(const BlockFormat& vf, const unsigned char* values) {
    const unsigned char* scales = values + vf.scales_offset();
    const unsigned char* zeros = values + vf.zeros_offset();
#pragma unroll
    for (int k = 0; k < kSlices; ++k) {
      const int c = lane_ + kLanes * k;
      if (c < dim_) {
        value_scales_[c] = half_at(scales + 2 * c);
        value_zeros_[c] = vf.has_zeros() ? half_at(zeros + 2 * c) : 0.0f;
      }
    }
  }

  // The online-softmax step of one slice of 32 tokens: a new maximum per head, the output and
  // zero terms rescaled to it, and each token's weight p into the warp's shared memory.
  __device__ void softmax_step(const float (&score)[kHeads]) {
#pragma unroll
    for (int h = 0; h < kHeads; ++h) {
      const float m = fmaxf(m_[h], lanes_max(score[h]));
      const float base = softmax_base(m);
      const float f = exp2f(m_[h] - base);
      const float p = exp2f(score[h] - base);
      l_[h] = fmaf(l_[h], f, p);
#pragma unroll
      for (int i = 0; i < 4 * kGroups; ++i) acc_[h][i] *= f;
#pragma unroll
      for (int j = 0; j < kGroups; ++j) zero_acc_[h][j] *= f;
      m_[h] = m;
      weights_[h * kLanes + lane_] = p;
    }
  }

  // Σ_t p_t·v_t over the slice's n tokens into the lane's channels. Values per token: weights
  // p_t·s_{g,t} on the raw codes, the zero terms Σ_t p_t·z_{g,t} kept apart. Values per channel:
  // each code dequantized with its channel's constants. FP16: the values as they are. A lane
  // loads a batch of tokens' codes before it uses the first.
  template <Precision P>
  __device__ void add_values(const BlockFormat& vf, const unsigned char* values, int first, int n,
                             bool per_channel) {
    const bool token_constants = P != Precision::fp16 && !per_channel;
    int group[kGroups];
#pragma unroll
    for (int j = 0; j < kGroups; ++j) {
      group[j] = token_constants ? min(4 * run_[j] / vf.group_size, vf.groups_per_token() - 1) : 0;
    }
    constexpr int kBatch = P == Precision::fp16 ? 8 : 16;  // 16 registers of codes
    const std::size_t row_bytes = vf.row_bytes();
#pragma unroll 1
    for (int step = 0; step < n; step += kBatch * phases_) {
      RunBits<P> bits[kBatch][kGroups];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int t = step + b * phases_ + phase_;
        const unsigned char* row = values + std::size_t(first + t) * row_bytes;
#pragma unroll
        for (int j = 0; j < kGroups; ++j) {
          bits[b][j] = load_run<P>(row, run_[j], dim_, t < n && run_ok_[j]);
        }
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        // The same in every lane; a lane's own token may still be past n (weight 0).
        if (step + b * phases_ < n) {
          add_token_values<P>(bits[b], step + b * phases_ + phase_, group, per_channel);
        }
      }
    }
  }

  // Adds one token's values (its codes in bits, its weights at t in shared memory) to the
  // lane's channels; see add_values.
  template <Precision P>
  __device__ void add_token_values(const RunBits<P> (&bits)[kGroups], int t,
                                   const int (&group)[kGroups], bool per_channel) {
    const bool token_constants = P != Precision::fp16 && !per_channel;
    float y[kGroups][4], scale[kGroups], zero[kGroups];
#pragma unroll
    for (int j = 0; j < kGroups; ++j) {
      run_values<P>(y[j], bits[j], run_[j], dim_, levels_);
      scale[j] = token_constants ? value_scales_[group[j] * kScaleStride + t] : 1.0f;
      zero[j] = token_constants ? value_zeros_[group[j] * kScaleStride + t] : 0.0f;
      if (per_channel) {
        const int c = run_ok_[j] ? 4 * run_[j] : 0;
        const float4 cs = *reinterpret_cast<const float4*>(value_scales_ + c);
        const float4 cz = *reinterpret_cast<const float4*>(value_zeros_ + c);
        y[j][0] = fmaf(cs.x, y[j][0], cz.x);
        y[j][1] = fmaf(cs.y, y[j][1], cz.y);
        y[j][2] = fmaf(cs.z, y[j][2], cz.z);
        y[j][3] = fmaf(cs.w, y[j][3], cz.w);
      }
    }
#pragma unroll
    for (int h = 0; h < kHeads; ++h) {
      const float p = weights_[h * kLanes + t];
#pragma unroll
      for (int j = 0; j < kGroups; ++j) {
        const float w = p * scale[j];
#pragma unroll
        for (int i = 0; i < 4; ++i) acc_[h][4 * j + i] = fmaf(w, y[j][i], acc_[h][4 * j + i]);
        if (token_constants) zero_acc_[h][j] = fmaf(p, zero[j], zero_acc_[h][j]);
      }
    }
  }

  const DecodeParams& p_;
  int dim_;
  int lane_;
  std::size_t head_;         // layer · n_kv_heads + KV head: the store's head index
  const float* q_;           // [kHeads][dim] scaled query (shared)
  const float* slice_sums_;  // [kHeads][kMaxSlices]
  const float* levels_;      // the 16 NF4 levels
  // This warp's:
  float* folded_;        // [kHeads][dim]
  float* weights_;       // [kHeads][kLanes]
  float* bias_;          // [kHeads]
  float* value_scales_;  // [groups][kScaleStride] (values per token) or [dim] (per channel)
  float* value_zeros_;
  int phases_ = 1;
  int phase_ = 0;
  int run_[kGroups];
  bool run_ok_[kGroups];
  float m_[kHeads];
  float l_[kHeads];
  float acc_[kHeads][4 * kGroups];
  float zero_acc_[kHeads][kGroups];
};

// The batch's query (scaled to base 2), its slice sums and the NF4 levels into shared memory.
template <int kHeads>
__device__ void stage_query(const DecodeParams& p, float* shared, int first_head, int n_heads) {
  const int dim = p.view.head_dim;
  const DecodeShared layout{kHeads, dim};
  float* q = shared + layout.query();
  for (int i = int(threadIdx.x); i < kHeads * dim; i += kThreads) {
    const int h = i / dim;
    q[i] = h < n_heads ? p.q[std::size_t(first_head) * std::size_t(dim) + std::size_t(i)] * p.scale
                       : 0.0f;
  }
  if (threadIdx.x < 16) shared[layout.levels() + int(threadIdx.x)] = nf4_level(threadIdx.x);
  __syncthreads();
  for (int i = int(threadIdx.x); i < kHeads * kMaxSlices; i += kThreads) {
    const int h = i / kMaxSlices;
    const int s = i % kMaxSlices;
    float sum = 0.0f;
    if (s < dim / 32) {
      for (int c = 0; c < 32; ++c) sum += q[h * dim + 32 * s + c];
    }
    shared[layout.slice_sums() + i] = sum;
  }
  __syncthreads();
}

// Blocks an SM should hold of the kernel for kHeads heads and kGroups value runs a lane: its
// register budget. More heads or channels keep more output sums a lane, but do more arithmetic
// per byte read, so fewer warps still keep the memory busy.
constexpr int min_blocks_per_sm(int heads, int groups) {
  if (groups > 1) return 2;
  return heads <= 3 ? 4 : heads == 4 ? 3 : 2;
}

template <int kHeads, int kGroups>
__global__ void __launch_bounds__(kThreads, min_blocks_per_sm(kHeads, kGroups))
    decode_kernel(__grid_constant__ const DecodeParams p) {
  extern __shared__ float4 shared_storage[];
  float* shared = reinterpret_cast<float*>(shared_storage);
  const int kv_head = int(blockIdx.y);
  const int batch_first = int(blockIdx.z) * p.batch_heads;
  const int first_head = kv_head * p.group + batch_first;
  const int n_heads = min(p.batch_heads, p.group - batch_first);
  stage_query<kHeads>(p, shared, first_head, n_heads);

  const int warp = int(threadIdx.x) / kLanes;
  const int lane = int(threadIdx.x) % kLanes;
  const int range = int(blockIdx.x) * kDecodeWarps + warp;
  const DecodeShared layout{kHeads, p.view.head_dim};
  RangeWalk<kHeads, kGroups> walk(p, shared, shared + layout.warp(warp), kv_head, lane);
  walk.walk(range_begin(p.tiles, p.splits, range), range_begin(p.tiles, p.splits, range + 1));
  walk.write(first_head, n_heads, range);
}

using DecodeEntry = void (*)(DecodeParams);

struct KernelChoice {
  DecodeEntry kernel;
  int heads;
  int groups;
};

// The instantiations: heads per block 1, 2, 3, 4 or 8 (a batch of 5 to 7 runs as 8 with idle
// heads), one or two runs of 4 value channels a lane (head_dim up to 128, or up to 256).
constexpr KernelChoice kKernels[] = {{decode_kernel<1, 1>, 1, 1}, {decode_kernel<2, 1>, 2, 1},
                                     {decode_kernel<3, 1>, 3, 1}, {decode_kernel<4, 1>, 4, 1},
                                     {decode_kernel<8, 1>, 8, 1}, {decode_kernel<1, 2>, 1, 2},
                                     {decode_kernel<2, 2>, 2, 2}, {decode_kernel<3, 2>, 3, 2},
                                     {decode_kernel<4, 2>, 4, 2}, {decode_kernel<8, 2>, 8, 2}};

int kernel_index(int batch_heads, int head_dim) {
  const int heads = batch_heads <= 4 ? batch_heads : 8;
  const int groups = head_dim <= 128 ? 1 : 2;
  for (int i = 0; i < int(std::size(kKernels)); ++i) {
    if (kKernels[i].heads == heads && kKernels[i].groups == groups) return i;
  }
  throw Error("decode: no kernel for " + std::to_string(batch_heads) + " heads a block");
}

}  // namespace

DecodeKernel prepare_decode(int batch_heads, int head_dim, const GpuDevice& device) {
  if (head_dim > kMaxDim) {
    throw Error("decode: head_dim " + std::to_string(head_dim) + " is over the " +
                std::to_string(kMaxDim) + " the GPU attention kernels take");
  }
  DecodeKernel kernel;
  kernel.index = kernel_index(batch_heads, head_dim);
  const KernelChoice& choice = kKernels[kernel.index];
  kernel.shared_bytes = DecodeShared{choice.heads, head_dim}.bytes();
  if (kernel.shared_bytes > std::size_t(device.max_shared_per_block)) {
    throw Error("decode: head_dim " + std::to_string(head_dim) + " with " +
                std::to_string(batch_heads) + " query heads a block needs " +
                std::to_string(kernel.shared_bytes) + " bytes of shared memory; " + device.name +
                " allows " + std::to_string(device.max_shared_per_block));
  }
  COCKTAIL_GPU_CHECK(cudaFuncSetAttribute(
      choice.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kernel.shared_bytes)));
  int per_sm = 0;
  COCKTAIL_GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, choice.kernel, kThreads,
                                                                   kernel.shared_bytes));
  kernel.resident_blocks = std::max(1, per_sm) * device.multiprocessors;
  return kernel;
}

void launch_decode(const DecodeKernel& kernel, const DecodeSplit& split, int n_kv_heads,
                   const DecodeParams& params, cudaStream_t stream) {
  const dim3 grid(unsigned(split.blocks), unsigned(n_kv_heads), unsigned(split.batches.batches));
  kKernels[kernel.index].kernel<<<grid, kThreads, kernel.shared_bytes, stream>>>(params);
  COCKTAIL_GPU_CHECK_LAUNCH("decode_kernel");
}

}  // namespace cocktail::gpu
