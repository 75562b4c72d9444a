#include "cocktail/models/safetensors_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "cocktail/error.hpp"

namespace cocktail::models {
namespace {

using nlohmann::json;

constexpr std::size_t kLengthBytes = 8;

// Bytes per element of every dtype the format defines; nullopt for a name it does not.
std::optional<std::size_t> dtype_size(std::string_view dtype) {
  static constexpr std::pair<std::string_view, std::size_t> kSizes[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8}};
  for (const auto& [name, size] : kSizes) {
    if (name == dtype) return size;
  }
  return std::nullopt;
}

// The product of `dims`, or nullopt when it exceeds `limit` (so it never overflows).
std::optional<std::uint64_t> product_up_to(const std::vector<std::uint64_t>& dims,
                                           std::uint64_t limit) {
  if (std::find(dims.begin(), dims.end(), 0u) != dims.end()) return 0;
  std::uint64_t product = 1;
  for (const std::uint64_t dim : dims) {
    if (product > limit / dim) return std::nullopt;
    product *= dim;
  }
  return product;
}

// Reads the header's entries, each error naming the file and where the header starts.
class HeaderReader {
 public:
  HeaderReader(const std::filesystem::path& path, std::size_t data_offset, std::size_t data_size)
      : path_(path), data_offset_(data_offset), data_size_(data_size) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}: {}", path_.string(), what));
  }

  std::map<std::string, std::string> metadata(const json& entry) const {
    if (!entry.is_object()) fail("header field __metadata__ is not an object of strings");
    std::map<std::string, std::string> out;
    for (const auto& [key, value] : entry.items()) {
      if (!value.is_string()) fail(fmt::format("__metadata__ field '{}' is not a string", key));
      out.emplace(key, value.get<std::string>());
    }
    return out;
  }

  SafetensorsTensor tensor(const std::string& name, const json& entry,
                           std::span<const std::byte> data) const {
    if (!entry.is_object()) fail(fmt::format("tensor '{}': header entry is not an object", name));
    SafetensorsTensor t;
    t.name = name;
    t.dtype = string_field(name, entry, "dtype");
    const std::optional<std::size_t> size = dtype_size(t.dtype);
    if (!size) fail(fmt::format("tensor '{}': unknown dtype '{}'", name, t.dtype));
    const std::vector<std::uint64_t> shape = integers(name, entry, "shape");
    const std::vector<std::uint64_t> offsets = integers(name, entry, "data_offsets");
    if (offsets.size() != 2) {
      fail(fmt::format("tensor '{}': data_offsets has {} entries; expected [begin, end]", name,
                       offsets.size()));
    }
    const std::uint64_t begin = offsets[0], end = offsets[1];
    if (begin > end || end > data_size_) {
      fail(fmt::format(
          "tensor '{}': data_offsets [{}, {}] (file bytes {} to {}) lie outside the data area "
          "of {} bytes at file offset {}",
          name, begin, end, data_offset_ + begin, data_offset_ + end, data_size_, data_offset_));
    }
    const std::uint64_t bytes = end - begin;
    const std::optional<std::uint64_t> elements = product_up_to(shape, UINT64_MAX / *size);
    if (!elements || *elements * *size != bytes) {
      fail(
          fmt::format("tensor '{}': shape [{}] of {} needs {} bytes, but data_offsets [{}, {}] "
                      "hold {} (file offset {})",
                      name, fmt::join(shape, ", "), t.dtype,
                      elements ? std::to_string(*elements * *size) : "over 2^64", begin, end, bytes,
                      data_offset_ + begin));
    }
    t.shape.assign(shape.begin(), shape.end());
    t.offset = data_offset_ + std::size_t(begin);
    t.data = data.subspan(std::size_t(begin), std::size_t(bytes));
    return t;
  }

 private:
  std::string string_field(const std::string& name, const json& entry, const char* field) const {
    const auto it = entry.find(field);
    if (it == entry.end() || !it->is_string()) {
      fail(fmt::format("tensor '{}': field '{}' is missing or not a string", name, field));
    }
    return it->get<std::string>();
  }

  std::vector<std::uint64_t> integers(const std::string& name, const json& entry,
                                      const char* field) const {
    const auto it = entry.find(field);
    if (it == entry.end() || !it->is_array()) {
      fail(fmt::format("tensor '{}': field '{}' is missing or not an array", name, field));
    }
    std::vector<std::uint64_t> out;
    for (const json& v : *it) {
      // A dimension past int64 could not be a tensor of this file anyway.
      if (!v.is_number_unsigned() || v.get<std::uint64_t>() > std::uint64_t(INT64_MAX)) {
        fail(fmt::format("tensor '{}': field '{}' holds {}; expected non-negative integers", name,
                         field, v.dump()));
      }
      out.push_back(v.get<std::uint64_t>());
    }
    return out;
  }

  const std::filesystem::path& path_;
  std::size_t data_offset_;
  std::size_t data_size_;
};

}  // namespace

std::optional<TensorType> SafetensorsTensor::float_type() const {
  if (dtype == "F32") return TensorType::f32;
  if (dtype == "F16") return TensorType::f16;
  if (dtype == "BF16") return TensorType::bf16;
  return std::nullopt;
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : file_(path) {
  const std::span<const std::byte> bytes = file_.bytes();
  if (bytes.size() < kLengthBytes) {
    throw Error(fmt::format("{}: file of {} bytes is shorter than the 8-byte header length",
                            path.string(), bytes.size()));
  }
  std::uint64_t header_length = 0;
  for (std::size_t i = 0; i < kLengthBytes; ++i) {
    header_length |= std::uint64_t(bytes[i]) << (8 * i);
  }
  if (header_length > bytes.size() - kLengthBytes) {
    throw Error(
        fmt::format("{}: header length {} (bytes 0 to 8) runs past the end of the file "
                    "of {} bytes",
                    path.string(), header_length, bytes.size()));
  }
  data_offset_ = kLengthBytes + std::size_t(header_length);
  const std::span<const std::byte> header = bytes.subspan(kLengthBytes, header_length);
  json root;
  try {
    root = json::parse(reinterpret_cast<const char*>(header.data()),
                       reinterpret_cast<const char*>(header.data() + header.size()));
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: the JSON header (file bytes 8 to {}) does not parse: {}",
                            path.string(), data_offset_, e.what()));
  }
  const HeaderReader reader(path, data_offset_, bytes.size() - data_offset_);
  if (!root.is_object()) reader.fail("the JSON header is not an object");
  const std::span<const std::byte> data = bytes.subspan(data_offset_);
  for (const auto& [name, entry] : root.items()) {
    if (name == "__metadata__") {
      metadata_ = reader.metadata(entry);
    } else {
      tensors_.push_back(reader.tensor(name, entry, data));
    }
  }
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  const auto it =
      std::lower_bound(tensors_.begin(), tensors_.end(), name,
                       [](const SafetensorsTensor& t, std::string_view n) { return t.name < n; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

const SafetensorsTensor& SafetensorsFile::tensor(std::string_view name) const {
  const SafetensorsTensor* t = find(name);
  if (!t) throw Error(fmt::format("{}: tensor '{}' is missing", path().string(), name));
  return *t;
}

}  // namespace cocktail::models
