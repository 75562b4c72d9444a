#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cocktail/models/gguf_writer.hpp"

// The library's GGUF writer as the tests use it: small files in memory, valid ones and, by
// setting fields to what a writer never should, broken ones.
namespace cocktail::testing {

using Bytes = std::vector<std::byte>;
using TestValue = models::GgufWriterValue;
using models::GgufLayout;

// GGUF's value types, by the names the tests give them.
using models::GgufValueType;
inline constexpr GgufValueType kU8 = GgufValueType::u8, kI8 = GgufValueType::i8,
                               kU16 = GgufValueType::u16, kI16 = GgufValueType::i16,
                               kU32 = GgufValueType::u32, kI32 = GgufValueType::i32,
                               kF32 = GgufValueType::f32, kBool = GgufValueType::boolean,
                               kString = GgufValueType::string, kArray = GgufValueType::array,
                               kU64 = GgufValueType::u64, kI64 = GgufValueType::i64,
                               kF64 = GgufValueType::f64;

struct TestTensor {
  std::string name;
  std::uint32_t ggml_type = 0;
  std::vector<std::uint64_t> dims;
  // Empty: as many bytes as the type and dims take, in a pattern that differs per tensor.
  Bytes data;
};

class GgufWriter {
 public:
  // Written over what the library writes: a test sets them to break the file.
  std::uint32_t magic = models::GgufWriter::magic;
  std::uint32_t version = models::GgufWriter::version;
  std::optional<std::uint64_t> tensor_count, metadata_count;  // unset: the real counts

  GgufWriter& add(std::string key, TestValue value);
  GgufWriter& add_tensor(TestTensor tensor);
  GgufWriter& set_alignment(std::uint32_t bytes);
  GgufWriter& align_data(std::uint32_t bytes);

  Bytes bytes(GgufLayout* layout = nullptr) const;

 private:
  models::GgufWriter writer_;
  std::vector<Bytes> data_;  // per tensor, empty for the pattern
};

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
