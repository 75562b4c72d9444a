#pragma once

#include <cstddef>
#include <span>

#include "cocktail/quant_spec.hpp"

namespace cocktail {

// Order of codes inside a packed block. Keys are kept channel-major (the attention kernel
// vectorises over tokens), values token-major (it vectorises over channels).
enum class CodeOrder : unsigned char { channel_major, token_major };

// A block of values: `tokens` × `channels`, given token-major ([token][channel]).
struct BlockShape {
  int tokens = 0;
  int channels = 0;
  CodeOrder order = CodeOrder::token_major;
};

// Packs and unpacks one block for a QuantSpec. The packed form holds codes, scales and zeros;
// `packed_bytes` is its exact size, metadata included.
class Quantizer {
 public:
  virtual ~Quantizer() = default;
  virtual const QuantSpec& spec() const = 0;
  virtual std::size_t packed_bytes(const BlockShape& shape) const = 0;
  virtual void pack(std::span<const float> values, const BlockShape& shape,
                    std::span<std::byte> packed) const = 0;
  virtual void unpack(std::span<const std::byte> packed, const BlockShape& shape,
                      std::span<float> values) const = 0;
};

}  // namespace cocktail
