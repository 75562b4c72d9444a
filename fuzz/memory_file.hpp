#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>

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

}  // namespace cocktail::fuzz
