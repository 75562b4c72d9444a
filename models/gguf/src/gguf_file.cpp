#include "cocktail/models/gguf_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cstring>
#include <limits>
#include <map>
#include <type_traits>

#include "cocktail/error.hpp"
#include "gguf_text.hpp"

namespace cocktail::models {

namespace detail {

// The name of a field for messages, put together only when one is needed: a chain such as
// "metadata key #12 'llama.block_count'" → "value" → "element #3" → "length".
struct GgufField {
  const GgufField* parent = nullptr;
  std::string_view what;
  std::optional<std::uint64_t> index = std::nullopt;
  std::optional<std::string_view> name = std::nullopt;  // from the file, shown quoted

  std::string str() const {
    std::string text = parent ? parent->str() + " " : std::string();
    text += what;
    if (index) text += fmt::format(" #{}", *index);
    if (name) text += " " + quoted(*name, 64, '\'');
    return text;
  }
};

// Reads the file front to back; every read checks the bytes left first, and every failure is
// an Error naming the file, the field and the byte offset.
class GgufCursor {
 public:
  GgufCursor(std::span<const std::byte> bytes, const std::filesystem::path& path)
      : bytes_(bytes), path_(path) {}

  std::size_t pos() const { return pos_; }
  std::size_t left() const { return bytes_.size() - pos_; }
  const std::byte* at(std::size_t pos) const { return bytes_.data() + pos; }

  const std::byte* take(std::size_t n, const GgufField& field) {
    if (n > left())
      fail(field, pos_, fmt::format("truncated file: {} bytes needed, {} left", n, left()));
    const std::byte* start = at(pos_);
    pos_ += n;
    return start;
  }

  template <class T>
  T read(const GgufField& field) {
    T value;
    std::memcpy(&value, take(sizeof value, field), sizeof value);
    return value;
  }

  // A u64 length, then that many bytes.
  std::string_view read_string(const GgufField& field) {
    const GgufField length{&field, "length"};
    const std::size_t length_at = pos_;
    const auto n = read<std::uint64_t>(length);
    if (n > left())
      fail(length, length_at,
           fmt::format("string length {} is more than the {} bytes left in the file", n, left()));
    return {reinterpret_cast<const char*>(take(std::size_t(n), field)), std::size_t(n)};
  }

  [[noreturn]] void fail(const GgufField& field, std::size_t at, std::string_view problem) const {
    throw Error(
        fmt::format("{}: {} at byte offset {}: {}", path_.string(), field.str(), at, problem));
  }

 private:
  std::span<const std::byte> bytes_;
  const std::filesystem::path& path_;
  std::size_t pos_ = 0;
};

}  // namespace detail

namespace {

using detail::GgufCursor;
using detail::GgufField;

constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr std::uint32_t kMaxDims = 4;
constexpr int kMaxArrayNesting = 8;
constexpr auto kMaxElements = std::uint64_t(std::numeric_limits<std::int64_t>::max());
// The fewest bytes a metadata entry (key length, type, a one-byte value) and a tensor info
// (name length, n_dims, one dim, type, offset) take: counts are checked against them.
constexpr std::size_t kMinMetadataBytes = 8 + 4 + 1;
constexpr std::size_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

std::size_t min_encoded_size(GgufValueType type) {
  if (type == GgufValueType::string) return 8;
  if (type == GgufValueType::array) return 4 + 8;
  return fixed_size(type);
}

void check_value(GgufCursor& in, GgufValueType type, const GgufField& field, int nesting);

void check_bool(GgufCursor& in, const GgufField& field) {
  const std::size_t at = in.pos();
  const auto byte = in.read<std::uint8_t>(field);
  if (byte > 1) in.fail(field, at, fmt::format("bool is {}, not 0 or 1", byte));
}

// `nesting`: how many arrays hold this one.
void check_array(GgufCursor& in, const GgufField& field, int nesting) {
  const GgufField type_field{&field, "element type"};
  const std::size_t type_at = in.pos();
  if (nesting >= kMaxArrayNesting)
    in.fail(field, type_at, fmt::format("arrays nested more than {} deep", kMaxArrayNesting));
  const auto type_id = in.read<std::uint32_t>(type_field);
  if (!is_gguf_value_type(type_id))
    in.fail(type_field, type_at, fmt::format("unknown value type {}", type_id));
  const auto type = GgufValueType(type_id);

  const GgufField count_field{&field, "count"};
  const std::size_t count_at = in.pos();
  const auto count = in.read<std::uint64_t>(count_field);
  if (count > in.left() / min_encoded_size(type))
    in.fail(count_field, count_at,
            fmt::format("{} elements of {} cannot fit in the {} bytes left in the file", count,
                        to_string(type), in.left()));
  if (type != GgufValueType::boolean && fixed_size(type) > 0) {
    in.take(std::size_t(count) * fixed_size(type), field);
    return;
  }
  for (std::uint64_t i = 0; i < count; ++i)
    check_value(in, type, GgufField{&field, "element", i}, nesting + 1);
}

void check_value(GgufCursor& in, GgufValueType type, const GgufField& field, int nesting) {
  switch (type) {
    case GgufValueType::string:
      in.read_string(field);
      return;
    case GgufValueType::array:
      check_array(in, field, nesting);
      return;
    case GgufValueType::boolean:
      check_bool(in, field);
      return;
    default:
      in.take(fixed_size(type), field);
  }
}

std::string unsupported_type(std::uint32_t id) {
  std::vector<std::string_view> supported;
  for (std::uint32_t t = 0; t < 64; ++t)
    if (tensor_type_from_ggml(t)) supported.push_back(ggml_type_name(t));
  const std::string_view name = ggml_type_name(id);
  return fmt::format("{} {} is not supported (supported: {})",
                     name.empty() ? "unknown ggml type" : "ggml type",
                     name.empty() ? fmt::format("{}", id) : fmt::format("{} ({})", id, name),
                     fmt::join(supported, ", "));
}

// A value of the C++ type T read from a metadata value, or nullopt for another type.
template <class T>
std::optional<T> convert(const GgufValue& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value.as_bool();
  } else if constexpr (std::is_integral_v<T>) {
    return value.as_integer<T>();
  } else if constexpr (std::is_floating_point_v<T>) {
    const auto f = value.as_float();
    return f ? std::optional<T>(T(*f)) : std::nullopt;
  } else {
    const auto s = value.as_string();
    return s ? std::optional<T>(std::string(*s)) : std::nullopt;
  }
}

template <class T>
std::string expected() {
  if constexpr (std::is_same_v<T, bool>) {
    return "bool";
  } else if constexpr (std::is_integral_v<T>) {
    return fmt::format("{}{} (or another integer type, with a value that fits)",
                       std::is_signed_v<T> ? 'i' : 'u', 8 * sizeof(T));
  } else if constexpr (std::is_floating_point_v<T>) {
    return sizeof(T) == 4 ? "f32 (or f64)" : "f64 (or f32)";
  } else {
    return "string";
  }
}

template <class T>
T scalar(const GgufFile& file, std::string_view key, const GgufValue& value) {
  if (auto x = convert<T>(value)) return std::move(*x);
  throw Error(fmt::format("{}: metadata key '{}' is {} {}, expected {}", file.path().string(), key,
                          value.type_name(), value.to_text(4), expected<T>()));
}

template <class T>
std::vector<T> array(const GgufFile& file, std::string_view key, const GgufValue& value) {
  if (value.type() != GgufValueType::array)
    throw Error(fmt::format("{}: metadata key '{}' is {} {}, expected an array of {}",
                            file.path().string(), key, value.type_name(), value.to_text(4),
                            expected<T>()));
  std::vector<T> out;
  out.reserve(std::size_t(value.size()));  // the file holds that many elements
  for (const GgufValue element : value.elements()) {
    auto x = convert<T>(element);
    if (!x)
      throw Error(fmt::format(
          "{}: metadata key '{}' is an {}, expected an array of {}: element #{} is {} {}",
          file.path().string(), key, value.type_name(), expected<T>(), out.size(),
          element.type_name(), element.to_text(4)));
    out.push_back(std::move(*x));
  }
  return out;
}

template <class T>
std::optional<T> find_scalar(const GgufFile& file, std::string_view key) {
  const GgufValue* value = file.find(key);
  if (value == nullptr) return std::nullopt;
  return scalar<T>(file, key, *value);
}

template <class T>
std::optional<std::vector<T>> find_array(const GgufFile& file, std::string_view key) {
  const GgufValue* value = file.find(key);
  if (value == nullptr) return std::nullopt;
  return array<T>(file, key, *value);
}

}  // namespace

GgufFile::GgufFile(const std::filesystem::path& path) : file_(path) {
  GgufCursor in(file_.bytes(), file_.path());

  const GgufField magic_field{nullptr, "magic"};
  const auto magic = in.read<std::uint32_t>(magic_field);
  if (magic != kMagic)
    in.fail(magic_field, 0,
            fmt::format("not a GGUF file: it starts with {}, not 'GGUF'",
                        quoted({reinterpret_cast<const char*>(in.at(0)), 4}, 4, '\'')));

  const GgufField version_field{nullptr, "version"};
  const std::size_t version_at = in.pos();
  version_ = in.read<std::uint32_t>(version_field);
  if (version_ == 1)
    in.fail(version_field, version_at,
            "GGUF version 1 (32-bit counts and lengths) is not supported, only versions 2 and 3: "
            "convert the model again with a current llama.cpp");
  if (const std::uint32_t swapped = __builtin_bswap32(version_); swapped == 2 || swapped == 3)
    in.fail(version_field, version_at,
            fmt::format("a big-endian GGUF file (version {}); only little-endian ones are read",
                        swapped));
  if (version_ != 2 && version_ != 3)
    in.fail(version_field, version_at,
            fmt::format("unsupported GGUF version {} (supported: 2 and 3)", version_));

  const GgufField tensors_field{nullptr, "tensor count"};
  const std::size_t tensors_at = in.pos();
  const auto n_tensors = in.read<std::uint64_t>(tensors_field);
  const GgufField metadata_field{nullptr, "metadata key count"};
  const std::size_t metadata_at = in.pos();
  const auto n_metadata = in.read<std::uint64_t>(metadata_field);
  if (n_tensors > in.left() / kMinTensorInfoBytes)
    in.fail(tensors_field, tensors_at,
            fmt::format("{} tensors cannot fit in the {} bytes left in the file", n_tensors,
                        in.left()));
  if (n_metadata > (in.left() - n_tensors * kMinTensorInfoBytes) / kMinMetadataBytes)
    in.fail(metadata_field, metadata_at,
            fmt::format("{} metadata keys and {} tensors cannot fit in the {} bytes left in the "
                        "file",
                        n_metadata, n_tensors, in.left()));

  read_metadata(in, n_metadata);
  read_tensors(in, n_tensors);
}

void GgufFile::read_metadata(GgufCursor& in, std::uint64_t count) {
  metadata_.reserve(std::size_t(count));
  metadata_index_.reserve(std::size_t(count));
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::size_t key_at = in.pos();
    const GgufField unnamed{nullptr, "metadata key", i};
    const std::string_view key = in.read_string(GgufField{&unnamed, "name"});
    const GgufField entry{nullptr, "metadata key", i, key};

    const GgufField type_field{&entry, "type"};
    const std::size_t type_at = in.pos();
    const auto type_id = in.read<std::uint32_t>(type_field);
    if (!is_gguf_value_type(type_id))
      in.fail(type_field, type_at, fmt::format("unknown value type {}", type_id));
    const auto type = GgufValueType(type_id);

    const GgufField value_field{&entry, "value"};
    const std::size_t value_at = in.pos();
    check_value(in, type, value_field, 0);

    const auto [previous, added] = metadata_index_.emplace(key, metadata_.size());
    if (!added)
      in.fail(entry, key_at,
              fmt::format("duplicate key: metadata key #{} has it too", previous->second));
    const GgufValue& value =
        metadata_.emplace_back(GgufMetadata{key, GgufValue::decode(type, in.at(value_at))}).value;

    if (key == "general.alignment") {
      const auto alignment = value.as_integer<std::uint32_t>();
      if (!alignment || !std::has_single_bit(*alignment))
        in.fail(value_field, value_at,
                fmt::format("the alignment must be a power of two, not {} {}", value.type_name(),
                            value.to_text(4)));
      alignment_ = *alignment;
    }
  }
}

void GgufFile::read_tensors(GgufCursor& in, std::uint64_t count) {
  tensors_.reserve(std::size_t(count));
  tensor_index_.reserve(std::size_t(count));
  std::vector<std::size_t> offsets_at;  // where each tensor's offset field is, for messages
  offsets_at.reserve(std::size_t(count));

  for (std::uint64_t i = 0; i < count; ++i) {
    const std::size_t name_at = in.pos();
    GgufTensor tensor;
    const GgufField unnamed{nullptr, "tensor", i};
    tensor.name = in.read_string(GgufField{&unnamed, "name"});
    const GgufField entry{nullptr, "tensor", i, tensor.name};

    const GgufField n_dims_field{&entry, "n_dims"};
    const std::size_t n_dims_at = in.pos();
    const auto n_dims = in.read<std::uint32_t>(n_dims_field);
    if (n_dims < 1 || n_dims > kMaxDims)
      in.fail(n_dims_field, n_dims_at, fmt::format("{} dimensions, not 1 to {}", n_dims, kMaxDims));

    const GgufField dims_field{&entry, "dims"};
    const std::size_t dims_at = in.pos();
    std::uint64_t elements = 1;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      const auto ne = in.read<std::uint64_t>(dims_field);
      if (ne == 0) in.fail(dims_field, dims_at, fmt::format("dimension {} is 0", d));
      if (ne > kMaxElements || __builtin_mul_overflow(elements, ne, &elements) ||
          elements > kMaxElements)
        in.fail(dims_field, dims_at,
                fmt::format("the dims overflow: more than 2^63 - 1 elements by dimension {} ({})",
                            d, ne));
      tensor.dims.push_back(std::int64_t(ne));
    }

    const GgufField type_field{&entry, "type"};
    const std::size_t type_at = in.pos();
    const auto type_id = in.read<std::uint32_t>(type_field);
    const auto type = tensor_type_from_ggml(type_id);
    if (!type) in.fail(type_field, type_at, unsupported_type(type_id));
    tensor.type = *type;

    const TensorTypeInfo block = info(tensor.type);
    const std::int64_t row = tensor.dims[0];
    if (row % block.block_elements != 0)
      in.fail(dims_field, dims_at,
              fmt::format("a row of {} elements (ne0) is not a whole number of {} blocks of {} "
                          "elements",
                          row, to_string(tensor.type), block.block_elements));
    std::size_t row_size = 0;
    if (__builtin_mul_overflow(std::size_t(row / block.block_elements),
                               std::size_t(block.block_bytes), &row_size) ||
        __builtin_mul_overflow(row_size, std::size_t(std::int64_t(elements) / row), &tensor.bytes))
      in.fail(dims_field, dims_at,
              fmt::format("{} elements of {} take more bytes than a size_t holds", elements,
                          to_string(tensor.type)));

    const GgufField offset_field{&entry, "offset"};
    offsets_at.push_back(in.pos());
    tensor.offset = in.read<std::uint64_t>(offset_field);
    if (tensor.offset % alignment_ != 0)
      in.fail(offset_field, offsets_at.back(),
              fmt::format("data offset {} is not a multiple of the alignment {}", tensor.offset,
                          alignment_));

    const auto [previous, added] = tensor_index_.emplace(tensor.name, tensors_.size());
    if (!added)
      in.fail(entry, name_at,
              fmt::format("duplicate tensor name: tensor #{} has it too", previous->second));
    tensors_.push_back(std::move(tensor));
  }

  // The data section starts at the next multiple of the alignment; every tensor's data must lie
  // within the file.
  data_offset_ = (in.pos() + alignment_ - 1) / alignment_ * alignment_;
  const std::size_t size = file_size();
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    GgufTensor& tensor = tensors_[i];
    const GgufField entry{nullptr, "tensor", i, tensor.name};
    const std::size_t room = data_offset_ <= size ? size - data_offset_ : 0;
    if (tensor.offset > room || tensor.bytes > room - tensor.offset)
      in.fail(GgufField{&entry, "offset"}, offsets_at[i],
              fmt::format("{} bytes of data at offset {} in the data section, which starts at "
                          "byte {}, run past the end of the file ({} bytes)",
                          tensor.bytes, tensor.offset, data_offset_, size));
    tensor.data = file_.bytes().data() + data_offset_ + tensor.offset;
  }
}

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].value;
}

const GgufValue& GgufFile::value(std::string_view key) const {
  if (const GgufValue* value = find(key)) return *value;
  throw Error(fmt::format("{}: no metadata key {} (the file has {} keys)", path().string(),
                          quoted(key, 64, '\''), metadata_.size()));
}

const GgufTensor* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensor& GgufFile::tensor(std::string_view name) const {
  if (const GgufTensor* tensor = find_tensor(name)) return *tensor;
  throw Error(fmt::format("{}: no tensor named {} (the file has {} tensors)", path().string(),
                          quoted(name, 64, '\''), tensors_.size()));
}

// Each typed read in a line: the checks are in scalar() and array().
// clang-format off
std::uint32_t GgufFile::get_u32(std::string_view key) const { return scalar<std::uint32_t>(*this, key, value(key)); }
std::int32_t GgufFile::get_i32(std::string_view key) const { return scalar<std::int32_t>(*this, key, value(key)); }
std::uint64_t GgufFile::get_u64(std::string_view key) const { return scalar<std::uint64_t>(*this, key, value(key)); }
std::int64_t GgufFile::get_i64(std::string_view key) const { return scalar<std::int64_t>(*this, key, value(key)); }
float GgufFile::get_f32(std::string_view key) const { return scalar<float>(*this, key, value(key)); }
double GgufFile::get_f64(std::string_view key) const { return scalar<double>(*this, key, value(key)); }
bool GgufFile::get_bool(std::string_view key) const { return scalar<bool>(*this, key, value(key)); }
std::string GgufFile::get_string(std::string_view key) const { return scalar<std::string>(*this, key, value(key)); }
std::vector<std::string> GgufFile::get_string_array(std::string_view key) const { return array<std::string>(*this, key, value(key)); }
std::vector<std::int32_t> GgufFile::get_i32_array(std::string_view key) const { return array<std::int32_t>(*this, key, value(key)); }
std::vector<float> GgufFile::get_f32_array(std::string_view key) const { return array<float>(*this, key, value(key)); }

std::optional<std::uint32_t> GgufFile::find_u32(std::string_view key) const { return find_scalar<std::uint32_t>(*this, key); }
std::optional<std::int32_t> GgufFile::find_i32(std::string_view key) const { return find_scalar<std::int32_t>(*this, key); }
std::optional<std::uint64_t> GgufFile::find_u64(std::string_view key) const { return find_scalar<std::uint64_t>(*this, key); }
std::optional<std::int64_t> GgufFile::find_i64(std::string_view key) const { return find_scalar<std::int64_t>(*this, key); }
std::optional<float> GgufFile::find_f32(std::string_view key) const { return find_scalar<float>(*this, key); }
std::optional<double> GgufFile::find_f64(std::string_view key) const { return find_scalar<double>(*this, key); }
std::optional<bool> GgufFile::find_bool(std::string_view key) const { return find_scalar<bool>(*this, key); }
std::optional<std::string> GgufFile::find_string(std::string_view key) const { return find_scalar<std::string>(*this, key); }
std::optional<std::vector<std::string>> GgufFile::find_string_array(std::string_view key) const { return find_array<std::string>(*this, key); }
std::optional<std::vector<std::int32_t>> GgufFile::find_i32_array(std::string_view key) const { return find_array<std::int32_t>(*this, key); }
std::optional<std::vector<float>> GgufFile::find_f32_array(std::string_view key) const { return find_array<float>(*this, key); }
// clang-format on

std::string GgufFile::describe() const {
  std::map<std::string_view, int> per_type;
  for (const GgufTensor& tensor : tensors_) ++per_type[to_string(tensor.type)];
  std::vector<std::string> types;
  for (const auto& [name, n] : per_type) types.push_back(fmt::format("{} {}", n, name));
  std::string text = fmt::format(
      "{}: GGUF v{}, {} bytes, {} metadata keys, {} tensors ({}), alignment {}, data section at "
      "byte {}\n",
      path().string(), version_, file_size(), metadata_.size(), tensors_.size(),
      fmt::join(types, ", "), alignment_, data_offset_);
  for (const auto& [key, value] : metadata_)
    text += fmt::format("  {} ({}) = {}\n", key, value.type_name(), value.to_text(4));
  return text;
}

}  // namespace cocktail::models
