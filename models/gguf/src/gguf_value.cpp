#include "cocktail/models/gguf_value.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstring>

#include "gguf_text.hpp"

namespace cocktail::models {

static_assert(std::endian::native == std::endian::little,
              "GGUF values are read as little-endian, as the files store them");

namespace {

template <class T>
T load(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

// Layout of an array: element type (u32), element count (u64), then the elements.
constexpr std::size_t kArrayHeader = 4 + 8;
constexpr std::size_t kStringHeader = 8;

}  // namespace

std::string_view to_string(GgufValueType type) {
  switch (type) {
    case GgufValueType::u8:
      return "u8";
    case GgufValueType::i8:
      return "i8";
    case GgufValueType::u16:
      return "u16";
    case GgufValueType::i16:
      return "i16";
    case GgufValueType::u32:
      return "u32";
    case GgufValueType::i32:
      return "i32";
    case GgufValueType::f32:
      return "f32";
    case GgufValueType::boolean:
      return "bool";
    case GgufValueType::string:
      return "string";
    case GgufValueType::array:
      return "array";
    case GgufValueType::u64:
      return "u64";
    case GgufValueType::i64:
      return "i64";
    case GgufValueType::f64:
      return "f64";
  }
  return "?";
}

std::size_t fixed_size(GgufValueType type) {
  switch (type) {
    case GgufValueType::u8:
    case GgufValueType::i8:
    case GgufValueType::boolean:
      return 1;
    case GgufValueType::u16:
    case GgufValueType::i16:
      return 2;
    case GgufValueType::u32:
    case GgufValueType::i32:
    case GgufValueType::f32:
      return 4;
    case GgufValueType::u64:
    case GgufValueType::i64:
    case GgufValueType::f64:
      return 8;
    case GgufValueType::string:
    case GgufValueType::array:
      return 0;
  }
  return 0;
}

GgufValue GgufValue::decode(GgufValueType type, const std::byte* at) {
  GgufValue value;
  value.type_ = value.element_type_ = type;
  if (type == GgufValueType::string) {
    value.data_ = at + kStringHeader;
    value.bytes_ = std::size_t(load<std::uint64_t>(at));
  } else if (type == GgufValueType::array) {
    value.element_type_ = GgufValueType(load<std::uint32_t>(at));
    value.count_ = load<std::uint64_t>(at + 4);
    value.data_ = at + kArrayHeader;
    value.bytes_ = encoded_size(type, at) - kArrayHeader;
  } else {
    value.data_ = at;
    value.bytes_ = fixed_size(type);
  }
  return value;
}

std::size_t GgufValue::encoded_size(GgufValueType type, const std::byte* at) {
  if (type == GgufValueType::string) return kStringHeader + std::size_t(load<std::uint64_t>(at));
  if (type != GgufValueType::array) return fixed_size(type);
  const auto element = GgufValueType(load<std::uint32_t>(at));
  const auto count = std::size_t(load<std::uint64_t>(at + 4));
  if (const std::size_t size = fixed_size(element)) return kArrayHeader + count * size;
  std::size_t total = kArrayHeader;
  for (std::size_t i = 0; i < count; ++i) total += encoded_size(element, at + total);
  return total;
}

bool GgufValue::is_integer() const {
  return unsigned_integer() || signed_integer();
}

std::optional<std::uint64_t> GgufValue::unsigned_integer() const {
  switch (type_) {
    case GgufValueType::u8:
      return load<std::uint8_t>(data_);
    case GgufValueType::u16:
      return load<std::uint16_t>(data_);
    case GgufValueType::u32:
      return load<std::uint32_t>(data_);
    case GgufValueType::u64:
      return load<std::uint64_t>(data_);
    default:
      return std::nullopt;
  }
}

std::optional<std::int64_t> GgufValue::signed_integer() const {
  switch (type_) {
    case GgufValueType::i8:
      return load<std::int8_t>(data_);
    case GgufValueType::i16:
      return load<std::int16_t>(data_);
    case GgufValueType::i32:
      return load<std::int32_t>(data_);
    case GgufValueType::i64:
      return load<std::int64_t>(data_);
    default:
      return std::nullopt;
  }
}

std::optional<double> GgufValue::as_float() const {
  if (type_ == GgufValueType::f32) return load<float>(data_);
  if (type_ == GgufValueType::f64) return load<double>(data_);
  return std::nullopt;
}

std::optional<bool> GgufValue::as_bool() const {
  if (type_ != GgufValueType::boolean) return std::nullopt;
  return load<std::uint8_t>(data_) != 0;
}

std::optional<std::string_view> GgufValue::as_string() const {
  if (type_ != GgufValueType::string) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(data_), bytes_);
}

GgufValue::Elements GgufValue::elements() const {
  if (type_ != GgufValueType::array) return {};
  return {Iterator(element_type_, data_), Iterator(element_type_, data_ + bytes_)};
}

std::string GgufValue::type_name() const {
  if (type_ != GgufValueType::array) return std::string(to_string(type_));
  return fmt::format("array of {}", to_string(element_type_));
}

std::string GgufValue::to_text(std::size_t max_elements) const {
  if (const auto u = unsigned_integer()) return fmt::format("{}", *u);
  if (const auto s = signed_integer()) return fmt::format("{}", *s);
  if (type_ == GgufValueType::f32) return fmt::format("{}", load<float>(data_));  // 1e-05
  if (type_ == GgufValueType::f64) return fmt::format("{}", load<double>(data_));
  if (const auto b = as_bool()) return *b ? "true" : "false";
  if (const auto s = as_string()) return quoted(*s, 80, '"');
  std::string text = "[";
  std::size_t shown = 0;
  for (const GgufValue element : elements()) {
    if (shown == max_elements) break;
    if (shown++ > 0) text += ", ";
    text += element.to_text(max_elements);
  }
  if (shown < count_) text += fmt::format("{}... {} elements", shown > 0 ? ", " : "", count_);
  return text + "]";
}

}  // namespace cocktail::models
