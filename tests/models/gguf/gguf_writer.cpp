#include "gguf_writer.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <fstream>

namespace cocktail::testing {

namespace fs = std::filesystem;

namespace {

// resize + memcpy rather than insert: GCC 12 warns wrongly about inserting a few bytes.
void append_bytes(Bytes& out, const void* bytes, std::size_t n) {
  if (n == 0) return;
  const std::size_t at = out.size();
  out.resize(at + n);
  std::memcpy(out.data() + at, bytes, n);
}

template <class T>
void append(Bytes& out, T v) {
  append_bytes(out, &v, sizeof v);
}

void append_string(Bytes& out, std::string_view s) {
  append<std::uint64_t>(out, s.size());
  append_bytes(out, s.data(), s.size());
}

template <class T>
TestValue scalar(std::uint32_t type, T v) {
  TestValue value{type, {}};
  append(value.bytes, v);
  return value;
}

std::size_t align_up(std::size_t n, std::size_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

}  // namespace

TestValue TestValue::u8(std::uint8_t v) {
  return scalar(kU8, v);
}
TestValue TestValue::i8(std::int8_t v) {
  return scalar(kI8, v);
}
TestValue TestValue::u16(std::uint16_t v) {
  return scalar(kU16, v);
}
TestValue TestValue::i16(std::int16_t v) {
  return scalar(kI16, v);
}
TestValue TestValue::u32(std::uint32_t v) {
  return scalar(kU32, v);
}
TestValue TestValue::i32(std::int32_t v) {
  return scalar(kI32, v);
}
TestValue TestValue::u64(std::uint64_t v) {
  return scalar(kU64, v);
}
TestValue TestValue::i64(std::int64_t v) {
  return scalar(kI64, v);
}
TestValue TestValue::f32(float v) {
  return scalar(kF32, v);
}
TestValue TestValue::f64(double v) {
  return scalar(kF64, v);
}
TestValue TestValue::boolean(bool v) {
  return scalar(kBool, std::uint8_t(v));
}

TestValue TestValue::string(std::string_view v) {
  TestValue value{kString, {}};
  append_string(value.bytes, v);
  return value;
}

TestValue TestValue::array(std::uint32_t element_type, const std::vector<TestValue>& elements) {
  TestValue value{kArray, {}};
  append(value.bytes, element_type);
  append<std::uint64_t>(value.bytes, elements.size());
  for (const TestValue& e : elements) append_bytes(value.bytes, e.bytes.data(), e.bytes.size());
  return value;
}

TestValue TestValue::strings(const std::vector<std::string>& elements) {
  std::vector<TestValue> values;
  for (const std::string& s : elements) values.push_back(string(s));
  return array(kString, values);
}

GgufWriter& GgufWriter::add(std::string key, TestValue value) {
  metadata_.emplace_back(std::move(key), std::move(value));
  return *this;
}

GgufWriter& GgufWriter::add_tensor(TestTensor tensor) {
  tensors_.push_back(std::move(tensor));
  return *this;
}

GgufWriter& GgufWriter::set_alignment(std::uint32_t bytes) {
  alignment = bytes;
  return add("general.alignment", TestValue::u32(bytes));
}

std::size_t tensor_bytes(std::uint32_t ggml_type, const std::vector<std::uint64_t>& dims) {
  // ggml's {elements, bytes} per block (the gguf package's GGML_QUANT_SIZES).
  struct Block {
    std::uint32_t id;
    std::size_t elements, bytes;
  };
  static constexpr Block kBlocks[] = {{0, 1, 4},   {1, 1, 2},      {2, 32, 18},    {3, 32, 20},
                                      {8, 32, 34}, {12, 256, 144}, {14, 256, 210}, {30, 1, 2}};
  for (const Block& b : kBlocks) {
    if (b.id != ggml_type || dims.empty()) continue;
    std::size_t rows = 1;
    for (std::size_t d = 1; d < dims.size(); ++d) rows *= dims[d];
    return dims[0] / b.elements * b.bytes * rows;
  }
  return 64;  // any size will do for a tensor the reader refuses
}

std::byte pattern_byte(std::size_t tensor, std::size_t i) {
  return std::byte((i * 31 + tensor * 7 + 1) & 0xff);
}

Bytes GgufWriter::bytes(GgufLayout* layout) const {
  GgufLayout where;
  Bytes out;
  append(out, magic);
  where.version = out.size();
  append(out, version);
  where.tensor_count = out.size();
  append<std::uint64_t>(out, tensor_count.value_or(tensors_.size()));
  where.metadata_count = out.size();
  append<std::uint64_t>(out, metadata_count.value_or(metadata_.size()));

  for (const auto& [key, value] : metadata_) {
    GgufLayout::Entry& entry = where.metadata.emplace_back();
    entry.key = out.size();
    append_string(out, key);
    entry.type = out.size();
    append(out, value.type);
    entry.value = out.size();
    append_bytes(out, value.bytes.data(), value.bytes.size());
  }

  // Tensor infos, with each tensor's data placed after the previous one's.
  std::vector<Bytes> data;
  std::uint64_t next = 0;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const TestTensor& t = tensors_[i];
    Bytes d = t.data;
    if (d.empty()) {
      d.resize(tensor_bytes(t.ggml_type, t.dims));
      for (std::size_t b = 0; b < d.size(); ++b) d[b] = pattern_byte(i, b);
    }
    GgufLayout::Tensor& info = where.tensors.emplace_back();
    info.name = out.size();
    append_string(out, t.name);
    info.n_dims = out.size();
    append<std::uint32_t>(out, std::uint32_t(t.dims.size()));
    info.dims = out.size();
    for (const std::uint64_t ne : t.dims) append(out, ne);
    info.type = out.size();
    append(out, t.ggml_type);
    info.offset = out.size();
    info.data_offset = t.offset.value_or(align_up(next, alignment));
    info.data_bytes = d.size();
    append(out, info.data_offset);
    next = info.data_offset + d.size();
    data.push_back(std::move(d));
  }

  // The data section: no padding after the last tensor, so the file ends with its data.
  where.data_start = align_up(out.size(), alignment);
  if (!tensors_.empty()) {
    std::size_t end = where.data_start;
    for (const GgufLayout::Tensor& t : where.tensors)
      end = std::max<std::size_t>(end, where.data_start + t.data_offset + t.data_bytes);
    out.resize(std::min<std::size_t>(end, std::size_t(1) << 20));  // huge offsets stay small
    for (std::size_t i = 0; i < data.size(); ++i) {
      const std::size_t at = where.data_start + where.tensors[i].data_offset;
      if (at + data[i].size() <= out.size())
        std::memcpy(out.data() + at, data[i].data(), data[i].size());
    }
  }
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
