#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/models/mapped_file.hpp"
#include "cocktail/tensor_type.hpp"

namespace cocktail::models {

// One tensor of a SafetensorsFile; `data` points into the file's mapping.
struct SafetensorsTensor {
  std::string name;
  std::string dtype;  // as the header spells it: "F32", "F16", "BF16", "I64", ...
  std::vector<std::int64_t> shape;
  std::span<const std::byte> data;
  std::size_t offset = 0;  // of the data, from the start of the file

  // The TensorType of a float dtype (F32, F16, BF16); nullopt for the others.
  std::optional<TensorType> float_type() const;
};

// A safetensors file, mapped read-only: an 8-byte little-endian header length, a JSON header
// {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ..., "__metadata__": {...}}, then
// the data area the offsets count from. Opening checks the header length against the file,
// every offset against the data area and every shape × dtype size against its byte range,
// so a truncated or corrupt file is a cocktail::Error naming the file, the tensor, the field
// and its byte offset. Overlapping tensors are not rejected (nothing here writes them).
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_.path(); }
  std::size_t data_offset() const { return data_offset_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // Sorted by name.
  std::span<const SafetensorsTensor> tensors() const { return tensors_; }

  const SafetensorsTensor* find(std::string_view name) const;    // nullptr when absent
  const SafetensorsTensor& tensor(std::string_view name) const;  // throws when absent

 private:
  MappedFile file_;
  std::size_t data_offset_ = 0;
  std::map<std::string, std::string> metadata_;
  std::vector<SafetensorsTensor> tensors_;
};

}  // namespace cocktail::models
