// Rounding a float to FP16 bits to nearest, ties to even, in integer arithmetic: Vulkan leaves
// the rounding of OpFConvert (and packHalf2x16) to the device, while the store's tail and every
// quantizer's scales must round as the CPU backend does, bit for bit.

// The FP16 bits nearest x (ties to even): infinity beyond the FP16 range, a quiet NaN for NaN.
uint half_bits_rn(float x) {
  const uint f = floatBitsToUint(x);
  const uint sign = (f >> 16u) & 0x8000u;
  const uint a = f & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return sign | 0x7E00u;
  // 65520 and above round to 65536: infinity.
  if (a >= 0x477FF000u) return sign | 0x7C00u;
  if (a >= 0x38800000u) {
    // A normal FP16: the exponent rebiased (127 to 15), 13 mantissa bits rounded off.
    const uint m = a - 0x38000000u;
    return sign | ((m + 0xFFFu + ((m >> 13u) & 1u)) >> 13u);
  }
  // Below 2^-25 (half the smallest subnormal, which ties to 0): zero.
  if (a < 0x33000000u) return sign;
  // A subnormal FP16: the significand in units of 2^-24, rounded to nearest even.
  const uint shift = 126u - (a >> 23u);
  const uint significand = (a & 0x7FFFFFu) | 0x800000u;
  const uint q = significand >> shift;
  const uint rest = significand & ((1u << shift) - 1u);
  const uint half_unit = 1u << (shift - 1u);
  return sign | (q + ((rest > half_unit || (rest == half_unit && (q & 1u) != 0u)) ? 1u : 0u));
}

// An FP16 whose exponent bits are all set: infinite or NaN.
bool half_overflows(uint bits) {
  return (bits & 0x7C00u) == 0x7C00u;
}
