// A plugin descriptor made of fuzzed bytes: the four integer fields from the first 16 bytes,
// then one byte that makes each pointer null or not; the strings are the rest of the input
// cut at NUL bytes, and the functions a dummy. The descriptor sits in a heap block only as
// long as struct_size says (the three leading fields at least), so AddressSanitizer catches a
// read past what the plugin declared; a descriptor that passes must have what the registry
// uses.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "cocktail/plugin_abi.h"
#include "plugin_descriptor.hpp"

namespace {

int create_nothing(void*, void**, char*, std::size_t) {
  return 1;
}
void destroy_nothing(void*) {}

// Bytes read from the front of the input; zeros once it runs out.
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : rest_(data, size) {}

  std::uint32_t u32() {
    std::uint32_t value = 0;
    const std::size_t n = std::min(sizeof(value), rest_.size());
    if (n > 0) std::memcpy(&value, rest_.data(), n);
    rest_ = rest_.subspan(n);
    return value;
  }
  std::uint8_t byte() {
    if (rest_.empty()) return 0;
    const std::uint8_t value = rest_.front();
    rest_ = rest_.subspan(1);
    return value;
  }

  // The next NUL-terminated string, kept in `storage`.
  const char* string(std::string& storage) {
    const auto* begin = reinterpret_cast<const char*>(rest_.data());
    storage.assign(begin, strnlen(begin, rest_.size()));
    rest_ = rest_.subspan(std::min(rest_.size(), storage.size() + 1));
    return storage.c_str();
  }

 private:
  std::span<const std::uint8_t> rest_;
};

// descriptor_problem on a copy of `d` cut to the bytes its struct_size declares.
std::string problem_of_declared_bytes(const cocktail_plugin_descriptor& d) {
  constexpr std::size_t kLeadingFields = offsetof(cocktail_plugin_descriptor, kind);
  const std::size_t bytes = std::clamp<std::size_t>(d.struct_size, kLeadingFields, sizeof(d));
  const std::unique_ptr<std::byte[]> block(new std::byte[bytes]);
  std::memcpy(block.get(), &d, bytes);
  return cocktail::descriptor_problem(
      reinterpret_cast<const cocktail_plugin_descriptor*>(block.get()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  cocktail_plugin_descriptor d{};
  d.abi_major = in.u32();
  d.abi_minor = in.u32();
  d.struct_size = in.u32();
  d.kind = in.u32();
  const std::uint8_t present = in.byte();
  std::string name, version, description;
  d.name = (present & 1) ? in.string(name) : nullptr;
  d.version = (present & 2) ? in.string(version) : nullptr;
  d.description = (present & 4) ? in.string(description) : nullptr;
  d.create = (present & 8) ? create_nothing : nullptr;
  d.destroy = (present & 16) ? destroy_nothing : nullptr;

  const bool accepted = problem_of_declared_bytes(d).empty();
  if (accepted && (!d.name || !*d.name || !d.create || !d.destroy)) std::abort();
  (void)cocktail::descriptor_problem(nullptr);
  return 0;
}
