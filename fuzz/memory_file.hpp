#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

#include "cocktail/error.hpp"

namespace cocktail::fuzz {

// An anonymous in-memory file (memfd) that readers taking a path can open through
// /proc/self/fd, so a harness hands them its bytes without touching the disk.
class MemoryFile {
 public:
  MemoryFile();
  ~MemoryFile();
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  // Replaces the whole content.
  void assign(const std::uint8_t* data, std::size_t size);
  const std::filesystem::path& path() const { return path_; }

 private:
  int fd_ = -1;
  std::filesystem::path path_;
};

// Reads every byte, so that a span reaching past its mapping shows under the sanitizers.
inline void read_bytes(std::span<const std::byte> bytes) {
  unsigned sum = 0;
  for (const std::byte b : bytes) sum += unsigned(b);
  volatile unsigned keep = sum;
  (void)keep;
}

// Hands the fuzz input to `open_and_read` as a file's path. A refusal (cocktail::Error) is the
// expected outcome for most inputs; anything else escapes to libFuzzer as a finding.
template <class OpenAndRead>
int fuzz_as_file(const std::uint8_t* data, std::size_t size, OpenAndRead&& open_and_read) {
  static MemoryFile file;
  file.assign(data, size);
  try {
    open_and_read(file.path());
  } catch (const cocktail::Error&) {
  }
  return 0;
}

}  // namespace cocktail::fuzz
