#include "cocktail/dequantize.hpp"

#include <cstring>
#include <string>

#include "cocktail/error.hpp"

namespace cocktail {

namespace {

float half_at(const std::uint8_t* p) {
  std::uint16_t bits;
  std::memcpy(&bits, p, sizeof bits);
  return f32_from_f16(bits);
}

// Each decoder below writes one block of its type: the element count in tensor_type.hpp.

// Q8_0: fp16 d, 32 int8 q; x = d·q.
void block_q8_0(const std::uint8_t* b, float* y) {
  const float d = half_at(b);
  for (int i = 0; i < 32; ++i) y[i] = d * float(std::int8_t(b[2 + i]));
}

// Q4_0: fp16 d, 16 bytes; byte j holds element j (low nibble) and j + 16 (high); x = d·(q − 8).
void block_q4_0(const std::uint8_t* b, float* y) {
  const float d = half_at(b);
  const std::uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * float((qs[j] & 0x0F) - 8);
    y[j + 16] = d * float((qs[j] >> 4) - 8);
  }
}

// Q4_1: fp16 d, fp16 m, then nibbles as Q4_0; x = d·q + m.
void block_q4_1(const std::uint8_t* b, float* y) {
  const float d = half_at(b);
  const float m = half_at(b + 2);
  const std::uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * float(qs[j] & 0x0F) + m;
    y[j + 16] = d * float(qs[j] >> 4) + m;
  }
}

// Q4_K: fp16 d, fp16 dmin, 12 bytes of packed scales and mins, 128 bytes of nibbles. Each 64
// elements read 32 bytes: the low nibbles are sub-block 2c, the high ones sub-block 2c + 1;
// x = d·scale·q − dmin·min.
void block_q4_k(const std::uint8_t* b, float* y) {
  const float d = half_at(b);
  const float dmin = half_at(b + 2);
  const std::uint8_t* scales = b + 4;
  const std::uint8_t* qs = b + 16;
  for (int c = 0; c < 4; ++c, qs += 32, y += 64) {
    const auto [sc_lo, min_lo] = q4_k_scale_min(scales, 2 * c);
    const auto [sc_hi, min_hi] = q4_k_scale_min(scales, 2 * c + 1);
    for (int l = 0; l < 32; ++l) {
      y[l] = d * float(sc_lo) * float(qs[l] & 0x0F) - dmin * float(min_lo);
      y[l + 32] = d * float(sc_hi) * float(qs[l] >> 4) - dmin * float(min_hi);
    }
  }
}

// Q6_K: 128 bytes of low nibbles (ql), 64 bytes of high 2-bit pairs (qh), 16 int8 scales (one
// per 16 elements), fp16 d; x = d·scale·(q − 32). Each half of 128 elements reads 64 ql and
// 32 qh bytes: element l + 32k (k = 0..3) takes the low nibble of ql[l] (k = 0), ql[l + 32]
// (k = 1), or the high nibble of those (k = 2, 3), and bits 2k, 2k + 1 of qh[l].
void block_q6_k(const std::uint8_t* b, float* y) {
  const std::uint8_t* ql = b;
  const std::uint8_t* qh = b + 128;
  const auto* sc = reinterpret_cast<const std::int8_t*>(b + 192);
  const float d = half_at(b + 208);
  for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, y += 128) {
    for (int l = 0; l < 32; ++l) {
      const int low[4] = {ql[l] & 0x0F, ql[l + 32] & 0x0F, ql[l] >> 4, ql[l + 32] >> 4};
      for (int k = 0; k < 4; ++k) {
        const int q = (low[k] | (((qh[l] >> (2 * k)) & 3) << 4)) - 32;
        y[l + 32 * k] = d * float(sc[l / 16 + 2 * k]) * float(q);
      }
    }
  }
}

using BlockDecoder = void (*)(const std::uint8_t*, float*);

// The block decoder of a quantized type; null for the plain float types.
BlockDecoder block_decoder(TensorType type) {
  switch (type) {
    case TensorType::q8_0:
      return block_q8_0;
    case TensorType::q4_0:
      return block_q4_0;
    case TensorType::q4_1:
      return block_q4_1;
    case TensorType::q4_k:
      return block_q4_k;
    case TensorType::q6_k:
      return block_q6_k;
    case TensorType::f32:
    case TensorType::f16:
    case TensorType::bf16:
      break;
  }
  return nullptr;
}

}  // namespace

void dequantize_row(TensorType type, const std::byte* row, std::int64_t elements, float* out) {
  const TensorTypeInfo ti = info(type);
  if (elements < 0 || elements % ti.block_elements != 0) {
    throw Error("dequantize_row: a " + std::string(ti.name) + " row of " +
                std::to_string(elements) + " elements is not a whole number of " +
                std::to_string(ti.block_elements) + "-element blocks");
  }
  const auto* p = reinterpret_cast<const std::uint8_t*>(row);
  if (const BlockDecoder decode = block_decoder(type)) {
    for (std::int64_t b = 0; b < elements / ti.block_elements; ++b) {
      decode(p + b * ti.block_bytes, out + b * ti.block_elements);
    }
  } else if (type == TensorType::f32) {
    std::memcpy(out, p, std::size_t(elements) * sizeof(float));
  } else {
    for (std::int64_t i = 0; i < elements; ++i) {
      std::uint16_t bits;
      std::memcpy(&bits, p + 2 * i, sizeof bits);
      out[i] = type == TensorType::f16 ? f32_from_f16(bits) : f32_from_bf16(bits);
    }
  }
}

}  // namespace cocktail
