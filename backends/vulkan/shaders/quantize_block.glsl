// Quantizing one block (tile_codes.glsl's format) by every invocation of a workgroup: the
// commit's gather kernel (kv_commit.comp) and the quantizer's pack kernel (quant_pack.comp) both
// run this, so the quantizer the conformance suite checks is the code that commits run. The
// arithmetic is the CPU quantizer's (backends/cpu/src/quant/quantizer.cpp) and the CUDA one's
// (backends/cuda/src/quant/quantize_block.cuh), operation for operation, `precise` so that no
// multiply and add fuse:
//  - integers: scale (max − min)/(2^b − 1) and zero min, rounded to FP16, codes from those
//    rounded values, clamp((x − zero)/scale) rounded half to even (a zero scale gives code 0);
//    RangeFit::least_squares refits the range of INT4 and INT2 groups first;
//  - NF4: the absmax rounded to FP16, the code the number of level midpoints below x/absmax;
//  - FP16: x rounded to nearest even.
// The least-squares sums are float here, double on the CPU: devices need not have float64
// (shaderFloat64), and a refit is kept only where its own error is lower, so the fit never
// ends worse than the min/max range.
//
// Each invocation writes whole 32-bit words (two halves, four code bytes), so no two share a
// word, and every word of the block, padding included: the block needs no clearing first.
//
// Before including it, after workgroup.glsl, tile_codes.glsl and half_round.glsl, declare:
//   #define QUANT_WORDS name   a `coherent uint name[]` storage buffer the block is written to
//   float source_value(uint token, uint channel);   the block's values
//   void record_fault(uint kind, uint token, uint channel);
// record_fault gets FAULT_NON_FINITE for a value that is not finite, FAULT_BEYOND_HALF for an
// FP16 value, or a group's scale, zero or absmax, that overflows FP16 (with the group's first
// element).

#define FAULT_NON_FINITE 0u
#define FAULT_BEYOND_HALF 1u

#define RANGE_MIN_MAX 0u
#define RANGE_LEAST_SQUARES 1u

// One quantization group: `size` elements from (token, channel), along the tokens
// (per-channel groups) or along the channels (per-token groups).
struct GroupSpan {
  uint token;
  uint channel;
  uint size;
  bool along_tokens;
};

// The group whose constants are at scale index g (the inverse of scale_index for a group's first
// element).
GroupSpan group_span(BlockFormat f, uint g) {
  if (f.axis == AXIS_PER_CHANNEL) {
    const uint token = g / f.head_dim * f.group_size;
    return GroupSpan(token, g % f.head_dim, min(f.tokens - token, f.group_size), true);
  }
  const uint per_token = groups_per_token(f);
  const uint channel = g % per_token * f.group_size;
  return GroupSpan(g / per_token, channel, min(f.head_dim - channel, f.group_size), false);
}
uint span_token(GroupSpan g, uint i) {
  return g.token + (g.along_tokens ? i : 0u);
}
uint span_channel(GroupSpan g, uint i) {
  return g.channel + (g.along_tokens ? 0u : i);
}

float max_code_of(BlockFormat f) {
  return float((1u << block_bits(f)) - 1u);
}

// The FP16 at byte `offset` of the block being written (its constants, read back for the
// codes).
float written_half(uint offset) {
  return half_from_bits((QUANT_WORDS[offset >> 2u] >> ((offset & 2u) * 8u)) & 0xFFFFu);
}

// clamp((x − zero)/divisor, 0, max_code) rounded half to even.
float integer_code(float x, float zero, float divisor, float max_code) {
  precise const float q = (x - zero) / divisor;
  return roundEven(min(max(q, 0.0), max_code));
}

// One pass of the least-squares fit: codes under (scale, zero), and the sums over the values x
// and their codes q that a refit needs (x: q, qq, x, xq); returns their squared error.
float assign_codes(GroupSpan g, float scale, float zero, float max_code, out vec4 sums) {
  precise float error = 0.0;
  precise vec4 s = vec4(0.0);
  for (uint i = 0u; i < g.size; ++i) {
    const float x = source_value(span_token(g, i), span_channel(g, i));
    const float q = integer_code(x, zero, scale, max_code);
    precise const float d = scale * q + zero - x;
    error += d * d;
    s += vec4(q, q * q, x, x * q);
  }
  sums = s;
  return error;
}

// Refines [lo, hi] to the least-squares fit: codes under the current scale and zero, then scale
// and zero refit to them, for as long as the squared error falls (at most four rounds).
void fit_least_squares(GroupSpan g, float max_code, inout float lo, inout float hi) {
  const int kMaxRounds = 4;
  precise float scale = (hi - lo) / max_code;
  float zero = lo;
  if (!(scale > 0.0)) return;
  const float n = float(g.size);
  vec4 sums;
  float best = assign_codes(g, scale, zero, max_code, sums);
  for (int round_ = 0; round_ < kMaxRounds; ++round_) {
    precise const float det = n * sums.y - sums.x * sums.x;
    if (!(det > 0.0)) break;  // every value on one code: nothing to refit
    precise const float next_scale = (n * sums.w - sums.x * sums.z) / det;
    precise const float next_zero = (sums.z - next_scale * sums.x) / n;
    if (!(next_scale > 0.0)) break;
    vec4 next_sums;
    const float error = assign_codes(g, next_scale, next_zero, max_code, next_sums);
    if (!(error < best)) break;
    best = error;
    scale = next_scale;
    zero = next_zero;
    sums = next_sums;
  }
  lo = zero;
  precise const float top = zero + max_code * scale;
  hi = top;
}

// Works out group g's constants: x the scale (NF4: the absmax), y the zero, as FP16 bits.
uvec2 fit_group(BlockFormat f, uint fit, uint g) {
  const GroupSpan span = group_span(f, g);
  float lo = uintBitsToFloat(0x7F800000u);  // +infinity
  float hi = -lo;
  for (uint i = 0u; i < span.size; ++i) {
    const uint t = span_token(span, i);
    const uint c = span_channel(span, i);
    const float x = source_value(t, c);
    if (isnan(x) || isinf(x)) record_fault(FAULT_NON_FINITE, t, c);
    lo = min(lo, x);
    hi = max(hi, x);
  }
  if (f.precision_ == PRECISION_NF4) {
    const uint absmax = half_bits_rn(max(-lo, hi));
    if (half_overflows(absmax)) record_fault(FAULT_BEYOND_HALF, span.token, span.channel);
    return uvec2(absmax, 0u);
  }
  const float max_code = max_code_of(f);
  if (fit == RANGE_LEAST_SQUARES && block_bits(f) <= 4u) fit_least_squares(span, max_code, lo, hi);
  precise const float step = (hi - lo) / max_code;
  const uvec2 constants = uvec2(half_bits_rn(step), half_bits_rn(lo));
  if (half_overflows(constants.x) || half_overflows(constants.y)) {
    record_fault(FAULT_BEYOND_HALF, span.token, span.channel);
  }
  return constants;
}

// The code of x at (token, channel), from the group constants already in the block at `block`.
uint encode(BlockFormat f, uint block, float x, uint token, uint channel) {
  const uint at = 2u * scale_index(f, token, channel);
  const float scale = written_half(block + scales_offset(f) + at);
  const float divisor = scale > 0.0 ? scale : uintBitsToFloat(0x7F800000u);  // +infinity
  if (f.precision_ == PRECISION_NF4) {
    precise const float q = x / divisor;
    uint code = 0u;
    for (uint i = 0u; i + 1u < 16u; ++i) {
      precise const float midpoint = (kNf4Levels[i] + kNf4Levels[i + 1u]) / 2.0;
      code += q > midpoint ? 1u : 0u;
    }
    return code;
  }
  const float zero = written_half(block + zeros_offset(f) + at);
  return uint(integer_code(x, zero, divisor, max_code_of(f)));
}

// FP16 blocks: two halves a word, past the last row zero.
void store_halves(BlockFormat f, uint block) {
  const uint used = f.tokens * row_bytes(f);
  for (uint w = gl_LocalInvocationIndex; w < code_bytes(f) / 4u; w += WG) {
    uint word = 0u;
    if (4u * w < used) {
      const uint t = 4u * w / row_bytes(f);
      const uint c = 4u * w % row_bytes(f) / 2u;
      for (uint j = 0u; j < 2u; ++j) {
        const float x = source_value(t, c + j);
        if (isnan(x) || isinf(x)) record_fault(FAULT_NON_FINITE, t, c + j);
        const uint bits = half_bits_rn(x);
        if (half_overflows(bits)) record_fault(FAULT_BEYOND_HALF, t, c + j);
        word |= bits << (16u * j);
      }
    }
    QUANT_WORDS[(block >> 2u) + w] = word;
  }
}

// INT8 and the planar units: four code bytes a word, past the last row zero.
void store_codes(BlockFormat f, uint block) {
  const uint rb = row_bytes(f);
  const uint used = f.tokens * rb;
  const uint bits = block_bits(f);
  const uint per_byte = 8u / bits;
  for (uint w = gl_LocalInvocationIndex; w < code_bytes(f) / 4u; w += WG) {
    uint word = 0u;
    for (uint j = 0u; j < 4u && 4u * w + j < used; ++j) {
      const uint t = (4u * w + j) / rb;
      const uint row_byte = (4u * w + j) % rb;
      uint byte_ = 0u;
      for (uint m = 0u; m < per_byte; ++m) {
        const uint c = slot_channel(f, row_byte, m);
        byte_ |= encode(f, block, source_value(t, c), t, c) << (m * bits);
      }
      word |= byte_ << (8u * j);
    }
    QUANT_WORDS[(block >> 2u) + w] = word;
  }
}

// Quantizes the block source_value gives into the block at byte `block` of QUANT_WORDS. Every
// invocation of the workgroup calls it with the same arguments (it has a barrier).
void quantize_block(BlockFormat f, uint fit, uint block) {
  if (f.precision_ == PRECISION_FP16) {
    store_halves(f, block);
    return;
  }
  // Two groups' constants a word; the words past the last group are zero.
  const uint n = n_scales(f);
  const uint scale_words = align_tile(n * 2u) / 4u;
  for (uint w = gl_LocalInvocationIndex; w < scale_words; w += WG) {
    uvec2 scales = uvec2(0u);
    uvec2 zeros = uvec2(0u);
    for (uint j = 0u; j < 2u && 2u * w + j < n; ++j) {
      const uvec2 constants = fit_group(f, fit, 2u * w + j);
      scales[j] = constants.x;
      zeros[j] = constants.y;
    }
    QUANT_WORDS[((block + scales_offset(f)) >> 2u) + w] = scales.x | (scales.y << 16u);
    if (has_zeros(f)) {
      QUANT_WORDS[((block + zeros_offset(f)) >> 2u) + w] = zeros.x | (zeros.y << 16u);
    }
  }
  // The codes read every group's constants back from the block.
  memoryBarrierBuffer();
  barrier();
  store_codes(f, block);
}
