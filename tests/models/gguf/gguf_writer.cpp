#include "gguf_writer.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "cocktail/models/gguf_tensor.hpp"

namespace cocktail::testing {

namespace fs = std::filesystem;

namespace {

// Bytes a tensor of these dims takes in a type the reader supports; any size will do for a
// type it refuses.
std::size_t tensor_bytes(std::uint32_t ggml_type, const std::vector<std::uint64_t>& dims) {
  const std::optional<TensorType> type = models::tensor_type_from_ggml(ggml_type);
  if (!type || dims.empty()) return 64;
  std::size_t rows = 1;
  for (std::size_t d = 1; d < dims.size(); ++d) rows *= dims[d];
  return row_bytes(*type, std::int64_t(dims[0])) * rows;
}

}  // namespace

GgufWriter& GgufWriter::add(std::string key, TestValue value) {
  writer_.add(std::move(key), std::move(value));
  return *this;
}

GgufWriter& GgufWriter::add_tensor(TestTensor tensor) {
  const std::size_t bytes =
      tensor.data.empty() ? tensor_bytes(tensor.ggml_type, tensor.dims) : tensor.data.size();
  writer_.add_tensor({std::move(tensor.name), tensor.ggml_type, std::move(tensor.dims), bytes});
  data_.push_back(std::move(tensor.data));
  return *this;
}

GgufWriter& GgufWriter::set_alignment(std::uint32_t bytes) {
  writer_.set_alignment(bytes);
  return *this;
}

GgufWriter& GgufWriter::align_data(std::uint32_t bytes) {
  writer_.align_data(bytes);
  return *this;
}

std::byte pattern_byte(std::size_t tensor, std::size_t i) {
  return std::byte((i * 31 + tensor * 7 + 1) & 0xff);
}

Bytes GgufWriter::bytes(GgufLayout* layout) const {
  Bytes out = writer_.bytes([&](std::size_t tensor, std::span<std::byte> data) {
    const Bytes& given = data_[tensor];
    if (!given.empty()) {
      std::copy(given.begin(), given.end(), data.begin());
      return;
    }
    for (std::size_t b = 0; b < data.size(); ++b) data[b] = pattern_byte(tensor, b);
  });
  const GgufLayout where = writer_.layout();
  put_u32(out, 0, magic);
  put_u32(out, where.version, version);
  if (tensor_count) put_u64(out, where.tensor_count, *tensor_count);
  if (metadata_count) put_u64(out, where.metadata_count, *metadata_count);
  if (layout) *layout = where;
  return out;
}

void put_u32(Bytes& bytes, std::size_t at, std::uint32_t v) {
  std::memcpy(bytes.data() + at, &v, sizeof v);
}

void put_u64(Bytes& bytes, std::size_t at, std::uint64_t v) {
  std::memcpy(bytes.data() + at, &v, sizeof v);
}

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "cocktail-gguf-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "cannot create " << pattern;
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

fs::path TempDir::write(const std::string& name, std::span<const std::byte> bytes) const {
  const fs::path file = path_ / name;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!out) ADD_FAILURE() << "cannot write " << file;
  return file;
}

}  // namespace cocktail::testing
