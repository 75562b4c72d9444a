#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../gguf/gguf_writer.hpp"

// A safetensors writer for the tests: valid files from a list of tensors, and any header text
// verbatim for broken ones. It knows nothing of the reader.
namespace cocktail::testing {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
  Bytes data;
};

// The 8-byte little-endian length, the header padded with spaces to a multiple of 8, the data.
Bytes safetensors_raw(std::string_view header, const Bytes& data);
// A header listing `entries` with their data laid end to end in order, and __metadata__.
Bytes safetensors_file(const std::vector<SafetensorsEntry>& entries,
                       const std::map<std::string, std::string>& metadata = {});

Bytes f32_bytes(std::span<const float> values);

}  // namespace cocktail::testing
