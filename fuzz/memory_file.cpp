#include "memory_file.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace cocktail::fuzz {

namespace {

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

MemoryFile::MemoryFile() : fd_(memfd_create("cocktail-fuzz", MFD_CLOEXEC)) {
  if (fd_ < 0) throw_errno("memfd_create");
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemoryFile::~MemoryFile() {
  close(fd_);
}

void MemoryFile::assign(const std::uint8_t* data, std::size_t size) {
  if (ftruncate(fd_, 0) != 0) throw_errno("ftruncate");
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = pwrite(fd_, data + written, size - written, off_t(written));
    if (n <= 0) throw_errno("pwrite");
    written += std::size_t(n);
  }
}

}  // namespace cocktail::fuzz
