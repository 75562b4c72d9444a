// Arbitrary bytes as a GGUF file: opening it must either succeed with every metadata value and
// tensor readable inside the mapping, or throw cocktail::Error.
#include <cstddef>
#include <cstdint>

#include "cocktail/models/gguf_file.hpp"
#include "memory_file.hpp"

namespace {

using cocktail::models::GgufFile;

// Touches what the model loader reads: every value as text, the tokenizer's arrays, and every
// tensor's bytes.
void read_everything(const GgufFile& gguf) {
  (void)gguf.describe();
  (void)gguf.find_string_array("tokenizer.ggml.tokens");
  (void)gguf.find_i32_array("tokenizer.ggml.token_type");
  (void)gguf.find_f32_array("tokenizer.ggml.scores");
  (void)gguf.find_u32("general.alignment");
  for (const auto& tensor : gguf.tensors()) {
    (void)tensor.elements();
    cocktail::fuzz::read_bytes(tensor.span());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cocktail::fuzz::fuzz_as_file(data, size,
                                      [](const auto& path) { read_everything(GgufFile(path)); });
}
