#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cocktail/models/gguf_tensor.hpp"
#include "cocktail/models/gguf_value.hpp"
#include "cocktail/models/mapped_file.hpp"

namespace cocktail::models {

namespace detail {
class GgufCursor;  // the bounds-checked reader the parser uses
}

// One metadata entry; the key points into the file's mapping.
struct GgufMetadata {
  std::string_view key;
  GgufValue value;
};

// A GGUF model file (versions 2 and 3, little-endian), mapped read-only. Opening it checks
// every byte the header, metadata and tensor infos take, so a truncated or corrupt file is a
// cocktail::Error naming the file, the field ("metadata key #12 'llama.block_count' value",
// "tensor #3 'blk.0.attn_q.weight' offset") and its byte offset, before anything is allocated
// by a count or length from the file. Values and tensors are views into the mapping: they stay
// valid while this object (or the one it was moved into) lives.
class GgufFile {
 public:
  static constexpr std::uint32_t default_alignment = 32;

  explicit GgufFile(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_.path(); }
  std::uint32_t version() const { return version_; }
  std::uint32_t alignment() const { return alignment_; }    // general.alignment, else 32
  std::size_t data_offset() const { return data_offset_; }  // where the data section starts
  std::size_t file_size() const { return file_.size(); }

  // Metadata, in file order.
  std::span<const GgufMetadata> metadata() const { return metadata_; }
  const GgufValue* find(std::string_view key) const;   // nullptr when absent
  const GgufValue& value(std::string_view key) const;  // throws when absent

  // Typed reads. get_* throws when the key is absent, find_* then gives nullopt; both throw
  // when the value is of another type, naming the key and the type it has. Integers convert
  // between widths and signedness when the value fits; f32 and f64 convert to each other.
  std::uint32_t get_u32(std::string_view key) const;
  std::int32_t get_i32(std::string_view key) const;
  std::uint64_t get_u64(std::string_view key) const;
  std::int64_t get_i64(std::string_view key) const;
  float get_f32(std::string_view key) const;
  double get_f64(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::string get_string(std::string_view key) const;
  std::vector<std::string> get_string_array(std::string_view key) const;
  std::vector<std::int32_t> get_i32_array(std::string_view key) const;
  std::vector<float> get_f32_array(std::string_view key) const;

  std::optional<std::uint32_t> find_u32(std::string_view key) const;
  std::optional<std::int32_t> find_i32(std::string_view key) const;
  std::optional<std::uint64_t> find_u64(std::string_view key) const;
  std::optional<std::int64_t> find_i64(std::string_view key) const;
  std::optional<float> find_f32(std::string_view key) const;
  std::optional<double> find_f64(std::string_view key) const;
  std::optional<bool> find_bool(std::string_view key) const;
  std::optional<std::string> find_string(std::string_view key) const;
  std::optional<std::vector<std::string>> find_string_array(std::string_view key) const;
  std::optional<std::vector<std::int32_t>> find_i32_array(std::string_view key) const;
  std::optional<std::vector<float>> find_f32_array(std::string_view key) const;

  // Tensors, in file order.
  std::span<const GgufTensor> tensors() const { return tensors_; }
  const GgufTensor* find_tensor(std::string_view name) const;  // nullptr when absent
  const GgufTensor& tensor(std::string_view name) const;       // throws when absent

  // A few lines for people: version, counts, alignment, tensors per type, every key's value.
  std::string describe() const;

 private:
  void read_metadata(detail::GgufCursor& in, std::uint64_t count);
  void read_tensors(detail::GgufCursor& in, std::uint64_t count);

  MappedFile file_;
  std::uint32_t version_ = 0;
  std::uint32_t alignment_ = default_alignment;
  std::size_t data_offset_ = 0;
  std::vector<GgufMetadata> metadata_;
  std::unordered_map<std::string_view, std::size_t> metadata_index_;
  std::vector<GgufTensor> tensors_;
  std::unordered_map<std::string_view, std::size_t> tensor_index_;
};

}  // namespace cocktail::models
