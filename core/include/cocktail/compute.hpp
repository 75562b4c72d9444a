#pragma once

#include <string_view>

namespace cocktail {

// The dense operations a Llama or BERT forward needs (quantized-weight matmul, norms, RoPE,
// activations, embedding lookup), so models run on every backend. Declared here for the model
// runtime; no operation is defined yet.
class Compute {
 public:
  virtual ~Compute() = default;
  virtual std::string_view name() const = 0;
};

}  // namespace cocktail
