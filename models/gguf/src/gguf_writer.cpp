#include "cocktail/models/gguf_writer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>
#include <system_error>
#include <utility>

#include "cocktail/error.hpp"
#include "cocktail/models/gguf_tensor.hpp"

namespace cocktail::models {

static_assert(std::endian::native == std::endian::little,
              "GGUF values are written as little-endian, as the files store them");

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::byte>;

// resize + memcpy rather than insert: GCC 12 warns wrongly about inserting a few bytes.
void append_bytes(Bytes& out, const void* bytes, std::size_t n) {
  if (n == 0) return;
  const std::size_t at = out.size();
  out.resize(at + n);
  std::memcpy(out.data() + at, bytes, n);
}

template <class T>
void append(Bytes& out, T v) {
  append_bytes(out, &v, sizeof v);
}

void append_string(Bytes& out, std::string_view s) {
  append<std::uint64_t>(out, s.size());
  append_bytes(out, s.data(), s.size());
}

template <class T>
GgufWriterValue scalar(GgufValueType type, T v) {
  GgufWriterValue value{type, {}};
  append(value.bytes, v);
  return value;
}

// An array's header: the element type and count.
GgufWriterValue array_of(GgufValueType element_type, std::size_t count) {
  GgufWriterValue value{GgufValueType::array, {}};
  append(value.bytes, element_type);
  append<std::uint64_t>(value.bytes, count);
  return value;
}

std::uint64_t align_up(std::uint64_t n, std::uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

[[noreturn]] void fail(const fs::path& path, std::string_view what, int error) {
  throw Error(fmt::format("{}: {}: {}", path.string(), what, std::strerror(error)));
}

// A file written front to back, closed when it goes.
class OutputFile {
 public:
  explicit OutputFile(const fs::path& path)
      : path_(path), fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) {
    if (fd_ < 0) fail(path_, "cannot create", errno);
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  void write(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(path_, "cannot write", errno);
      bytes = bytes.subspan(std::size_t(n));
    }
  }

  void write_zeros(std::uint64_t n) {
    static constexpr std::byte kZeros[256]{};
    while (n > 0) {
      const auto part = std::size_t(std::min<std::uint64_t>(n, sizeof kZeros));
      write(std::span(kZeros, part));
      n -= part;
    }
  }

  // A full disk may only show at close, so its error is not ignored.
  void close() {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail(path_, "cannot write", errno);
  }

 private:
  const fs::path& path_;
  int fd_;
};

// Removes a file on the way out unless it was kept.
struct RemovedUnlessKept {
  const fs::path& path;
  bool keep = false;
  ~RemovedUnlessKept() {
    std::error_code ignored;
    if (!keep) fs::remove(path, ignored);
  }
};

}  // namespace

GgufWriterValue GgufWriterValue::u8(std::uint8_t v) {
  return scalar(GgufValueType::u8, v);
}
GgufWriterValue GgufWriterValue::i8(std::int8_t v) {
  return scalar(GgufValueType::i8, v);
}
GgufWriterValue GgufWriterValue::u16(std::uint16_t v) {
  return scalar(GgufValueType::u16, v);
}
GgufWriterValue GgufWriterValue::i16(std::int16_t v) {
  return scalar(GgufValueType::i16, v);
}
GgufWriterValue GgufWriterValue::u32(std::uint32_t v) {
  return scalar(GgufValueType::u32, v);
}
GgufWriterValue GgufWriterValue::i32(std::int32_t v) {
  return scalar(GgufValueType::i32, v);
}
GgufWriterValue GgufWriterValue::u64(std::uint64_t v) {
  return scalar(GgufValueType::u64, v);
}
GgufWriterValue GgufWriterValue::i64(std::int64_t v) {
  return scalar(GgufValueType::i64, v);
}
GgufWriterValue GgufWriterValue::f32(float v) {
  return scalar(GgufValueType::f32, v);
}
GgufWriterValue GgufWriterValue::f64(double v) {
  return scalar(GgufValueType::f64, v);
}
GgufWriterValue GgufWriterValue::boolean(bool v) {
  return scalar(GgufValueType::boolean, std::uint8_t(v));
}

GgufWriterValue GgufWriterValue::string(std::string_view v) {
  GgufWriterValue value{GgufValueType::string, {}};
  append_string(value.bytes, v);
  return value;
}

GgufWriterValue GgufWriterValue::array(GgufValueType element_type,
                                       const std::vector<GgufWriterValue>& elements) {
  GgufWriterValue value = array_of(element_type, elements.size());
  for (const GgufWriterValue& e : elements)
    append_bytes(value.bytes, e.bytes.data(), e.bytes.size());
  return value;
}

GgufWriterValue GgufWriterValue::strings(const std::vector<std::string>& elements) {
  GgufWriterValue value = array_of(GgufValueType::string, elements.size());
  for (const std::string& s : elements) append_string(value.bytes, s);
  return value;
}

GgufWriterValue GgufWriterValue::i32s(std::span<const std::int32_t> elements) {
  GgufWriterValue value = array_of(GgufValueType::i32, elements.size());
  append_bytes(value.bytes, elements.data(), elements.size_bytes());
  return value;
}

GgufWriter& GgufWriter::add(std::string key, GgufWriterValue value) {
  metadata_.emplace_back(std::move(key), std::move(value));
  return *this;
}

GgufWriter& GgufWriter::add_tensor(std::string name, TensorType type,
                                   std::vector<std::int64_t> dims) {
  const TensorTypeInfo block = info(type);
  if (dims.empty() || std::ranges::any_of(dims, [](std::int64_t d) { return d < 1; }) ||
      dims[0] % block.block_elements != 0) {
    throw Error(
        fmt::format("tensor '{}' of {} cannot have the dims [{}]: each must be at least 1 "
                    "and a row (the first) a whole number of blocks of {} elements",
                    name, to_string(type), fmt::join(dims, ", "), block.block_elements));
  }
  GgufWriterTensor tensor{std::move(name), ggml_type_id(type), {}, row_bytes(type, dims[0])};
  for (std::size_t d = 0; d < dims.size(); ++d) {
    tensor.dims.push_back(std::uint64_t(dims[d]));
    if (d > 0) tensor.bytes *= std::uint64_t(dims[d]);
  }
  return add_tensor(std::move(tensor));
}

GgufWriter& GgufWriter::add_tensor(GgufWriterTensor tensor) {
  tensors_.push_back(std::move(tensor));
  return *this;
}

GgufWriter& GgufWriter::set_alignment(std::uint32_t bytes) {
  align_data(bytes);
  return add("general.alignment", GgufWriterValue::u32(bytes));
}

GgufWriter& GgufWriter::align_data(std::uint32_t bytes) {
  if (!std::has_single_bit(bytes))
    throw Error(fmt::format("a GGUF alignment must be a power of two, not {}", bytes));
  alignment_ = bytes;
  return *this;
}

std::vector<std::byte> GgufWriter::head(GgufLayout* layout) const {
  GgufLayout where;
  Bytes out;
  append(out, magic);
  where.version = out.size();
  append(out, version);
  where.tensor_count = out.size();
  append<std::uint64_t>(out, tensors_.size());
  where.metadata_count = out.size();
  append<std::uint64_t>(out, metadata_.size());

  for (const auto& [key, value] : metadata_) {
    GgufLayout::Entry& entry = where.metadata.emplace_back();
    entry.key = out.size();
    append_string(out, key);
    entry.type = out.size();
    append(out, value.type);
    entry.value = out.size();
    append_bytes(out, value.bytes.data(), value.bytes.size());
  }

  // Each tensor's data goes after the previous one's, on the next multiple of the alignment.
  std::uint64_t next = 0;
  for (const GgufWriterTensor& t : tensors_) {
    GgufLayout::Tensor& info = where.tensors.emplace_back();
    info.name = out.size();
    append_string(out, t.name);
    info.n_dims = out.size();
    append<std::uint32_t>(out, std::uint32_t(t.dims.size()));
    info.dims = out.size();
    for (const std::uint64_t ne : t.dims) append(out, ne);
    info.type = out.size();
    append(out, t.ggml_type);
    info.offset = out.size();
    info.data_offset = align_up(next, alignment_);
    info.data_bytes = t.bytes;
    append(out, info.data_offset);
    next = info.data_offset + t.bytes;
  }

  // A file without tensors ends with its metadata; one with tensors with the last one's data.
  where.data_start = std::size_t(align_up(out.size(), alignment_));
  if (!tensors_.empty()) out.resize(where.data_start);
  where.file_size = out.size() + next;
  if (layout) *layout = std::move(where);
  return out;
}

GgufLayout GgufWriter::layout() const {
  GgufLayout where;
  head(&where);
  return where;
}

std::vector<std::byte> GgufWriter::bytes(const Fill& fill) const {
  GgufLayout where;
  Bytes out = head(&where);
  out.resize(std::size_t(where.file_size));
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const GgufLayout::Tensor& t = where.tensors[i];
    fill(i, std::span(out).subspan(where.data_start + std::size_t(t.data_offset),
                                   std::size_t(t.data_bytes)));
  }
  return out;
}

void GgufWriter::write(const fs::path& path, const Fill& fill, const Progress& progress) const {
  GgufLayout where;
  const Bytes head_bytes = head(&where);
  std::uint64_t largest = 0;
  for (const GgufWriterTensor& t : tensors_) largest = std::max(largest, t.bytes);
  const auto data = std::make_unique_for_overwrite<std::byte[]>(std::size_t(largest));

  const fs::path partial = path.string() + fmt::format(".{}.partial", ::getpid());
  RemovedUnlessKept cleanup{partial};
  OutputFile out(partial);
  out.write(head_bytes);
  std::uint64_t written = head_bytes.size();
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const GgufLayout::Tensor& t = where.tensors[i];
    const std::span<std::byte> tensor(data.get(), std::size_t(t.data_bytes));
    fill(i, tensor);
    out.write_zeros(where.data_start + t.data_offset - written);
    out.write(tensor);
    written = where.data_start + t.data_offset + t.data_bytes;
    if (progress) progress(written, where.file_size);
  }
  out.close();
  std::error_code error;
  fs::rename(partial, path, error);
  if (error) {
    throw Error(
        fmt::format("cannot move {} to {}: {}", partial.string(), path.string(), error.message()));
  }
  cleanup.keep = true;
}

}  // namespace cocktail::models
