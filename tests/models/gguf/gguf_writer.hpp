#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// A GGUF writer for the tests: it makes small synthetic files, valid ones and, by setting
// fields to what a writer never should, broken ones. It knows nothing of the reader.
namespace cocktail::testing {

using Bytes = std::vector<std::byte>;

// GGUF's value type ids.
enum GgufId : std::uint32_t {
  kU8 = 0,
  kI8,
  kU16,
  kI16,
  kU32,
  kI32,
  kF32,
  kBool,
  kString,
  kArray,
  kU64,
  kI64,
  kF64,
};

// A metadata value as the file holds it: its type id and the bytes that follow the type.
struct TestValue {
  std::uint32_t type = kU8;
  Bytes bytes;

  static TestValue u8(std::uint8_t v);
  static TestValue i8(std::int8_t v);
  static TestValue u16(std::uint16_t v);
  static TestValue i16(std::int16_t v);
  static TestValue u32(std::uint32_t v);
  static TestValue i32(std::int32_t v);
  static TestValue u64(std::uint64_t v);
  static TestValue i64(std::int64_t v);
  static TestValue f32(float v);
  static TestValue f64(double v);
  static TestValue boolean(bool v);
  static TestValue string(std::string_view v);
  // Elements must all be of `element_type` for a valid file (the writer does not check).
  static TestValue array(std::uint32_t element_type, const std::vector<TestValue>& elements);
  static TestValue strings(const std::vector<std::string>& elements);
};

struct TestTensor {
  std::string name;
  std::uint32_t ggml_type = 0;
  std::vector<std::uint64_t> dims;
  // Empty: as many bytes as the type and dims take, in a pattern that differs per tensor.
  Bytes data;
  // Unset: laid out after the previous tensor's data, on the next multiple of the alignment.
  std::optional<std::uint64_t> offset;
};

// Where the writer put each field, to check the offsets that error messages give.
struct GgufLayout {
  struct Entry {
    std::size_t key = 0, type = 0, value = 0;
  };
  struct Tensor {
    std::size_t name = 0, n_dims = 0, dims = 0, type = 0, offset = 0;
    std::uint64_t data_offset = 0;  // from the start of the data section
    std::size_t data_bytes = 0;
  };
  std::size_t version = 0, tensor_count = 0, metadata_count = 0;
  std::vector<Entry> metadata;
  std::vector<Tensor> tensors;
  std::size_t data_start = 0;
};

class GgufWriter {
 public:
  std::uint32_t magic = 0x46554747;  // "GGUF"
  std::uint32_t version = 3;
  // Lays out the data; set_alignment also writes general.alignment.
  std::uint32_t alignment = 32;
  std::optional<std::uint64_t> tensor_count, metadata_count;  // unset: the real counts

  GgufWriter& add(std::string key, TestValue value);
  GgufWriter& add_tensor(TestTensor tensor);
  GgufWriter& set_alignment(std::uint32_t bytes);

  Bytes bytes(GgufLayout* layout = nullptr) const;

 private:
  std::vector<std::pair<std::string, TestValue>> metadata_;
  std::vector<TestTensor> tensors_;
};

// Bytes a tensor of a supported type and these dims takes.
std::size_t tensor_bytes(std::uint32_t ggml_type, const std::vector<std::uint64_t>& dims);
// The byte the writer puts at `i` of tensor number `tensor` when no data is given.
std::byte pattern_byte(std::size_t tensor, std::size_t i);

// Little-endian encodings, to patch a field of a written file.
void put_u32(Bytes& bytes, std::size_t at, std::uint32_t v);
void put_u64(Bytes& bytes, std::size_t at, std::uint64_t v);

// A folder of its own under the temp dir, removed with everything in it at the end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, std::span<const std::byte> bytes) const;

 private:
  std::filesystem::path path_;
};

}  // namespace cocktail::testing
