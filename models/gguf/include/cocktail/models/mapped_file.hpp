#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

namespace cocktail::models {

// A whole file mapped read-only into memory, unmapped when the object goes. Moving it keeps
// the mapping where it is, so pointers into `bytes()` stay valid for the object's lifetime.
// (Another process shrinking the file while it is mapped is not guarded against.)
class MappedFile {
 public:
  // Throws cocktail::Error naming the file and the system's reason.
  explicit MappedFile(const std::filesystem::path& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::filesystem::path& path() const { return path_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }

 private:
  void unmap() noexcept;

  std::filesystem::path path_;
  const std::byte* data_ = nullptr;  // null for an empty file
  std::size_t size_ = 0;
};

}  // namespace cocktail::models
