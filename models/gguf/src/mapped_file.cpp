#include "cocktail/models/mapped_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "cocktail/error.hpp"

namespace cocktail::models {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, std::string_view what, int error) {
  throw Error(fmt::format("{}: {}: {}", path.string(), what, std::strerror(error)));
}

// Closes the descriptor on every path out of the constructor; the mapping does not need it.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path) {
  // Non-blocking, or opening a FIFO would wait for a writer before fstat could refuse it.
  const Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) fail(path, "cannot open", errno);
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) fail(path, "cannot stat", errno);
  if (!S_ISREG(info.st_mode)) throw Error(fmt::format("{}: not a regular file", path.string()));
  size_ = std::size_t(info.st_size);
  if (size_ == 0) return;  // mmap refuses an empty range; an empty file has no bytes to view
  void* data = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (data == MAP_FAILED) fail(path, "cannot map", errno);
  data_ = static_cast<const std::byte*>(data);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  unmap();
}

void MappedFile::unmap() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace cocktail::models
