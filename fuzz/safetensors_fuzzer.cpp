// Arbitrary bytes as a safetensors file: opening it must either succeed with every tensor's
// bytes inside the mapping and matching its shape and dtype, or throw cocktail::Error.
#include <cstddef>
#include <cstdint>
#include <span>

#include "cocktail/models/safetensors_file.hpp"
#include "memory_file.hpp"

namespace {

using cocktail::models::SafetensorsFile;

void read_everything(const SafetensorsFile& file) {
  for (const auto& tensor : file.tensors()) {
    (void)tensor.float_type();
    (void)file.tensor(tensor.name);
    cocktail::fuzz::read_bytes(tensor.data);
  }
  for (const auto& [key, value] : file.metadata()) {
    cocktail::fuzz::read_bytes(std::as_bytes(std::span(key)));
    cocktail::fuzz::read_bytes(std::as_bytes(std::span(value)));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cocktail::fuzz::fuzz_as_file(
      data, size, [](const auto& path) { read_everything(SafetensorsFile(path)); });
}
