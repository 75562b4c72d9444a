// The GPU tile format (backends/gpu_common/tile_format.hpp, which the host uses to place
// blocks) in GLSL: a block's parts and the place of one code, and element-wise reads of a
// packed block (one code, one scale, one zero, one dequantized value) kept in a uint[]
// storage buffer. The commit's requantization, the quantizer's unpack and the attention
// kernels read through these, so they decode alike; kernels that stream whole rows may read the
// words themselves, and these are the definition they must agree with.
//
// Include after declaring the buffer and naming it: `#define TILE_WORDS name` for a
// `uint name[]` storage buffer. Every block offset is in bytes from the buffer's start and
// 16-byte aligned (every part of a block is), so offsets stay uint within one binding.

// Precision and QuantAxis, as cocktail/precision.hpp and quant_spec.hpp number them.
#define PRECISION_FP16 0u
#define PRECISION_INT8 1u
#define PRECISION_NF4 2u
#define PRECISION_INT4 3u
#define PRECISION_INT2 4u
#define AXIS_PER_CHANNEL 0u
#define AXIS_PER_TOKEN 1u

#define TILE_ALIGN 16u
#define UNIT_BYTES 16u

// One block (keys or values) of a tile: `tokens` tokens × head_dim channels of one precision.
struct BlockFormat {
  uint precision_;  // `precision` is a GLSL keyword
  uint axis;
  uint tokens;
  uint head_dim;
  uint group_size;
};

// kNf4Levels (cocktail/quant_spec.hpp), as the same float literals so they round alike.
const float kNf4Levels[16] = float[16](
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
    -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
    0.24611230194568634, 0.33791524795532227, 0.44070982489585876, 0.5626170039176941,
    0.7229568362236023, 1.0);

uint align_tile(uint bytes) {
  return (bytes + TILE_ALIGN - 1u) / TILE_ALIGN * TILE_ALIGN;
}

uint block_bits(BlockFormat f) {
  switch (f.precision_) {
    case PRECISION_INT8:
      return 8u;
    case PRECISION_NF4:
    case PRECISION_INT4:
      return 4u;
    case PRECISION_INT2:
      return 2u;
    default:
      return 16u;
  }
}
uint row_bytes(BlockFormat f) {
  return f.head_dim * block_bits(f) / 8u;
}
uint code_bytes(BlockFormat f) {
  return align_tile(f.tokens * row_bytes(f));
}
uint groups_per_token(BlockFormat f) {
  return (f.head_dim + f.group_size - 1u) / f.group_size;
}
uint token_groups(BlockFormat f) {
  return (f.tokens + f.group_size - 1u) / f.group_size;
}
uint n_scales(BlockFormat f) {
  if (f.precision_ == PRECISION_FP16) return 0u;
  return f.axis == AXIS_PER_CHANNEL ? token_groups(f) * f.head_dim
                                    : f.tokens * groups_per_token(f);
}
bool has_zeros(BlockFormat f) {
  return f.precision_ != PRECISION_FP16 && f.precision_ != PRECISION_NF4;
}
uint scales_offset(BlockFormat f) {
  return code_bytes(f);
}
uint zeros_offset(BlockFormat f) {
  return scales_offset(f) + align_tile(n_scales(f) * 2u);
}
uint block_bytes(BlockFormat f) {
  return zeros_offset(f) + (has_zeros(f) ? align_tile(n_scales(f) * 2u) : 0u);
}

// Index into the scales (and zeros) of the group that holds (token, channel).
uint scale_index(BlockFormat f, uint token, uint channel) {
  return f.axis == AXIS_PER_CHANNEL ? token / f.group_size * f.head_dim + channel
                                    : token * groups_per_token(f) + channel / f.group_size;
}

// Bytes of planar unit `unit` of a row: 16, or 8 for the half unit that ends an INT2 row of
// head_dim ≡ 32 (mod 64).
uint unit_bytes(BlockFormat f, uint unit) {
  return min(row_bytes(f) - unit * UNIT_BYTES, UNIT_BYTES);
}
// Where the code of (token, channel) is: x the byte from the block's start, y the shift of its
// bits in that byte.
uvec2 code_slot(BlockFormat f, uint token, uint channel) {
  const uint row = token * row_bytes(f);
  const uint b = block_bits(f);
  if (b >= 8u) return uvec2(row + channel * (b / 8u), 0u);
  const uint unit_channels = UNIT_BYTES * (8u / b);
  const uint unit = channel / unit_channels;
  const uint in_unit = channel % unit_channels;
  const uint width = unit_bytes(f, unit);
  return uvec2(row + unit * UNIT_BYTES + in_unit % width, in_unit / width * b);
}
// The channel whose code is in bits [plane·bits, (plane+1)·bits) of byte `row_byte` of a row
// of a bit-packed block: the inverse of code_slot, for writers that make a byte at a time.
uint slot_channel(BlockFormat f, uint row_byte, uint plane) {
  const uint unit = row_byte / UNIT_BYTES;
  return unit * UNIT_BYTES * (8u / block_bits(f)) + row_byte % UNIT_BYTES +
         plane * unit_bytes(f, unit);
}

// The byte at `offset`, and the FP16 bits at `offset` (2-byte aligned), of the buffer.
uint read_byte(uint offset) {
  return (TILE_WORDS[offset >> 2u] >> ((offset & 3u) * 8u)) & 0xFFu;
}
uint read_half_bits(uint offset) {
  return (TILE_WORDS[offset >> 2u] >> ((offset & 2u) * 8u)) & 0xFFFFu;
}
float half_from_bits(uint bits) {
  return unpackHalf2x16(bits).x;
}

// The raw code of (token, channel) of the block at `block`: an FP16 block's half bits, else the
// integer code.
uint read_code(BlockFormat f, uint block, uint token, uint channel) {
  const uvec2 slot = code_slot(f, token, channel);
  if (f.precision_ == PRECISION_FP16) return read_half_bits(block + slot.x);
  const uint byte_ = read_byte(block + slot.x);
  if (f.precision_ == PRECISION_INT8) return byte_;
  return (byte_ >> slot.y) & ((1u << block_bits(f)) - 1u);
}

// The scale (NF4: the absmax) of the group holding (token, channel); not for FP16 blocks.
float read_scale(BlockFormat f, uint block, uint token, uint channel) {
  return half_from_bits(
      read_half_bits(block + scales_offset(f) + 2u * scale_index(f, token, channel)));
}
// The zero of the group holding (token, channel): 0 for NF4; not for FP16 blocks.
float read_zero(BlockFormat f, uint block, uint token, uint channel) {
  if (!has_zeros(f)) return 0.0;
  return half_from_bits(
      read_half_bits(block + zeros_offset(f) + 2u * scale_index(f, token, channel)));
}

// A code's value under its group's constants (integers: scale·code + zero as one fused
// multiply-add, as the host and the CUDA kernels compute it; NF4: scale·level). Not for FP16.
float decode_code(uint precision_, uint code, float scale, float zero) {
  if (precision_ == PRECISION_NF4) return scale * kNf4Levels[code & 15u];
  precise const float value = fma(scale, float(code), zero);
  return value;
}

// The value stored for (token, channel) of the block at `block`.
float dequantize(BlockFormat f, uint block, uint token, uint channel) {
  const uint code = read_code(f, block, token, channel);
  if (f.precision_ == PRECISION_FP16) return half_from_bits(code);
  return decode_code(f.precision_, code, read_scale(f, block, token, channel),
                     read_zero(f, block, token, channel));
}
