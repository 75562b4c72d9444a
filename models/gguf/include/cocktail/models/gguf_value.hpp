#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace cocktail::models {

// The types of GGUF metadata values, with the ids the format gives them.
enum class GgufValueType : std::uint32_t {
  u8 = 0,
  i8 = 1,
  u16 = 2,
  i16 = 3,
  u32 = 4,
  i32 = 5,
  f32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  u64 = 10,
  i64 = 11,
  f64 = 12,
};

// True for the ids above.
constexpr bool is_gguf_value_type(std::uint32_t id) {
  return id <= std::uint32_t(GgufValueType::f64);
}

// "u8", "i32", "f32", "bool", "string", "array", ...
std::string_view to_string(GgufValueType type);

// Bytes one value of `type` takes in the file; 0 for string and array, whose size varies.
std::size_t fixed_size(GgufValueType type);

// One metadata value: a view into the mapping of the GgufFile it came from, valid while that
// file lives. The file checked its bytes when it was opened, so reading a value never fails;
// asking for the wrong type gives an empty optional.
class GgufValue {
 public:
  class Iterator;
  class Elements;

  GgufValueType type() const { return type_; }
  bool is_integer() const;

  // The value when it is an integer of any width or signedness that fits in T (writers differ:
  // one writes u32 where another writes i32 or u64); nullopt otherwise.
  template <std::integral T>
  requires(!std::same_as<T, bool>) std::optional<T> as_integer()
  const;
  std::optional<double> as_float() const;  // an f32 or f64
  std::optional<bool> as_bool() const;
  std::optional<std::string_view> as_string() const;  // the bytes, in the file's mapping

  // An array's elements, each a GgufValue of element_type() (arrays of arrays may hold arrays
  // of different element types). A value that is not an array has no elements.
  GgufValueType element_type() const { return element_type_; }
  std::uint64_t size() const { return count_; }
  Elements elements() const;

  // "u32", "string", "array of string", "array of array".
  std::string type_name() const;
  // A short readable form: 30, 1e-05, true, "llama", ["a", "b", ... 49152 elements]. Long
  // strings are cut, and arrays show at most `max_elements` elements.
  std::string to_text(std::size_t max_elements = 8) const;

 private:
  friend class GgufFile;
  GgufValue() = default;  // only decode() makes values, from bytes the file checked

  // The value of `type` encoded at `at`; the bytes must have been checked (see GgufFile).
  static GgufValue decode(GgufValueType type, const std::byte* at);
  // Bytes the value of `type` encoded at `at` takes, its length and count fields included.
  static std::size_t encoded_size(GgufValueType type, const std::byte* at);

  std::optional<std::uint64_t> unsigned_integer() const;
  std::optional<std::int64_t> signed_integer() const;

  GgufValueType type_ = GgufValueType::u8;
  GgufValueType element_type_ = GgufValueType::u8;  // for an array; else type_
  std::uint64_t count_ = 0;                         // elements of an array
  const std::byte* data_ = nullptr;  // the scalar, the string's bytes or the array's elements
  std::size_t bytes_ = 0;            // of data_
};

// Walks an array's elements in file order.
class GgufValue::Iterator {
 public:
  using iterator_concept = std::forward_iterator_tag;
  using iterator_category = std::input_iterator_tag;  // elements are made on the fly
  using value_type = GgufValue;
  using difference_type = std::ptrdiff_t;

  Iterator() = default;
  GgufValue operator*() const { return decode(type_, at_); }
  Iterator& operator++() {
    at_ += encoded_size(type_, at_);
    return *this;
  }
  Iterator operator++(int) {
    Iterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const Iterator& other) const { return at_ == other.at_; }

 private:
  friend class GgufValue;
  Iterator(GgufValueType type, const std::byte* at) : type_(type), at_(at) {}

  GgufValueType type_ = GgufValueType::u8;
  const std::byte* at_ = nullptr;
};

// An array's elements, for a range-for or std::ranges algorithms.
class GgufValue::Elements {
 public:
  Elements() = default;
  Iterator begin() const { return begin_; }
  Iterator end() const { return end_; }

 private:
  friend class GgufValue;
  Elements(Iterator begin, Iterator end) : begin_(begin), end_(end) {}

  Iterator begin_, end_;
};

template <std::integral T>
requires(!std::same_as<T, bool>) std::optional<T> GgufValue::as_integer()
const {
  if (const auto u = unsigned_integer()) {
    if (std::in_range<T>(*u)) return T(*u);
  } else if (const auto s = signed_integer()) {
    if (std::in_range<T>(*s)) return T(*s);
  }
  return std::nullopt;
}

}  // namespace cocktail::models
