#include "memory/cpu_buffer.hpp"

#include <cstdlib>
#include <string>

#include "alignment.hpp"
#include "cocktail/error.hpp"

namespace cocktail::cpu {

CpuBuffer::CpuBuffer(std::size_t bytes)
    : size_(bytes),
      owned_(static_cast<std::byte*>(std::aligned_alloc(kCacheLine, round_up(bytes, kCacheLine)))),
      data_(owned_.get()) {
  if (!data_ && bytes > 0) {
    throw Error("cpu backend: out of memory allocating a buffer of " + std::to_string(bytes) +
                " bytes");
  }
}

void CpuBuffer::Free::operator()(std::byte* p) const {
  std::free(p);
}

std::span<std::byte> host_bytes(const char* op, const char* operand, const Tensor& t) {
  const auto* buffer = dynamic_cast<const CpuBuffer*>(t.buffer);
  if (buffer == nullptr) {
    throw Error(std::string(op) + ": " + operand + " (" + describe(t) + ") is " +
                (t.buffer ? "in another backend's memory" : "an empty view") +
                "; the CPU backend reads only its own buffers");
  }
  expect_inside_buffer(op, operand, t, buffer->size());
  return {buffer->data() + t.offset, t.bytes()};
}

}  // namespace cocktail::cpu
