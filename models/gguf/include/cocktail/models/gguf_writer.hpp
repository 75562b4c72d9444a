#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cocktail/models/gguf_value.hpp"
#include "cocktail/tensor_type.hpp"

namespace cocktail::models {

// A metadata value as a GGUF file encodes it: its type and the bytes that follow the type id.
struct GgufWriterValue {
  GgufValueType type = GgufValueType::u8;
  std::vector<std::byte> bytes;

  static GgufWriterValue u8(std::uint8_t v);
  static GgufWriterValue i8(std::int8_t v);
  static GgufWriterValue u16(std::uint16_t v);
  static GgufWriterValue i16(std::int16_t v);
  static GgufWriterValue u32(std::uint32_t v);
  static GgufWriterValue i32(std::int32_t v);
  static GgufWriterValue u64(std::uint64_t v);
  static GgufWriterValue i64(std::int64_t v);
  static GgufWriterValue f32(float v);
  static GgufWriterValue f64(double v);
  static GgufWriterValue boolean(bool v);
  static GgufWriterValue string(std::string_view v);
  // The elements are not checked against `element_type`, so that tests can write the arrays a
  // reader must refuse; a valid file has every element of that type.
  static GgufWriterValue array(GgufValueType element_type,
                               const std::vector<GgufWriterValue>& elements);
  static GgufWriterValue strings(const std::vector<std::string>& elements);
  static GgufWriterValue i32s(std::span<const std::int32_t> elements);
};

// A tensor's info as the file holds it, and the bytes of its data.
struct GgufWriterTensor {
  std::string name;
  std::uint32_t ggml_type = 0;      // ggml_type_id() of a TensorType, or any id for a test
  std::vector<std::uint64_t> dims;  // ne0 (the row length) first
  std::uint64_t bytes = 0;
};

// Where a writer put each field of a file, in bytes from its start (tests check the offsets
// that a reader's errors give), and each tensor's data.
struct GgufLayout {
  struct Entry {
    std::size_t key = 0, type = 0, value = 0;
  };
  struct Tensor {
    std::size_t name = 0, n_dims = 0, dims = 0, type = 0, offset = 0;
    std::uint64_t data_offset = 0;  // from the start of the data section
    std::uint64_t data_bytes = 0;
  };
  std::size_t version = 0, tensor_count = 0, metadata_count = 0;
  std::vector<Entry> metadata;
  std::vector<Tensor> tensors;
  std::size_t data_start = 0;
  std::uint64_t file_size = 0;
};

// Writes GGUF files (version 3, little-endian): metadata and tensor infos in the order they
// were added, then each tensor's data on the next multiple of the alignment. The file ends with
// the last tensor's data. Tensor data comes from a fill function, one tensor at a time, so a
// file of many gigabytes is written with one tensor's bytes in memory.
class GgufWriter {
 public:
  static constexpr std::uint32_t magic = 0x46554747;  // "GGUF", little-endian
  static constexpr std::uint32_t version = 3;

  // Writes `out`, the data of tensor number `tensor` (out.size() is its bytes).
  using Fill = std::function<void(std::size_t tensor, std::span<std::byte> out)>;
  // Bytes written so far and the file's size, after each tensor.
  using Progress = std::function<void(std::uint64_t written, std::uint64_t total)>;

  GgufWriter& add(std::string key, GgufWriterValue value);
  // A tensor of a type the reader supports; throws Error naming it when it has no dims, one
  // below 1, or a row (dims[0]) that is not a whole number of the type's blocks.
  GgufWriter& add_tensor(std::string name, TensorType type, std::vector<std::int64_t> dims);
  GgufWriter& add_tensor(GgufWriterTensor tensor);
  // Puts tensor data on multiples of `bytes` and records that in general.alignment (u32), which
  // a reader needs unless it is the default 32. Both throw Error unless `bytes` is a power of
  // two.
  GgufWriter& set_alignment(std::uint32_t bytes);
  // Only puts tensor data on multiples of `bytes`: for a general.alignment added as another
  // integer type.
  GgufWriter& align_data(std::uint32_t bytes);

  GgufLayout layout() const;
  // The file up to its data section: header, metadata, tensor infos and, when there are
  // tensors, the padding to the data.
  std::vector<std::byte> head(GgufLayout* layout = nullptr) const;

  // The whole file in memory, for small ones.
  std::vector<std::byte> bytes(const Fill& fill) const;
  // Writes the file to `path` through a temporary file beside it, renamed into place once it is
  // complete, so a reader never sees a partial file. Throws Error naming the path and the
  // system's reason.
  void write(const std::filesystem::path& path, const Fill& fill,
             const Progress& progress = {}) const;

 private:
  std::uint32_t alignment_ = 32;
  std::vector<std::pair<std::string, GgufWriterValue>> metadata_;
  std::vector<GgufWriterTensor> tensors_;
};

}  // namespace cocktail::models
