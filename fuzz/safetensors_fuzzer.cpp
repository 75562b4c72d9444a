// Arbitrary bytes as a safetensors file: opening it must either succeed with every tensor's
// bytes inside the mapping and matching its shape and dtype, or throw cocktail::Error.
#include <cstddef>
#include <cstdint>

#include "cocktail/error.hpp"
#include "cocktail/models/safetensors_file.hpp"
#include "memory_file.hpp"

namespace {

using cocktail::models::SafetensorsFile;

void read_everything(const SafetensorsFile& file) {
  unsigned sum = 0;
  for (const auto& tensor : file.tensors()) {
    (void)tensor.float_type();
    (void)file.tensor(tensor.name);
    for (const std::byte b : tensor.data) sum += unsigned(b);
  }
  for (const auto& [key, value] : file.metadata()) sum += unsigned(key.size() + value.size());
  volatile unsigned keep = sum;
  (void)keep;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static cocktail::fuzz::MemoryFile file;
  file.assign(data, size);
  try {
    read_everything(SafetensorsFile(file.path()));
  } catch (const cocktail::Error&) {
    // A refused file is the expected outcome for most inputs.
  }
  return 0;
}
