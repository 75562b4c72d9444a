#include "memory/cpu_stream.hpp"

#include <cstring>
#include <string>
#include <type_traits>

#include "cocktail/error.hpp"
#include "memory/cpu_buffer.hpp"

namespace cocktail::cpu {

namespace {

// The time it was last recorded: the CPU stream's work before it is done by then.
class CpuEvent final : public Event {
 public:
  std::chrono::steady_clock::time_point at;
};

void expect_same_size(const char* op, std::size_t host, const Tensor& t) {
  if (host != t.bytes()) {
    throw Error(std::string(op) + ": " + std::to_string(host) + " host bytes for the " +
                std::to_string(t.bytes()) + "-byte tensor " + describe(t));
  }
}

// The CPU event behind `e`, const where `e` is.
template <class E>
auto& cpu_event(const char* op, E& e) {
  using Cpu = std::conditional_t<std::is_const_v<E>, const CpuEvent, CpuEvent>;
  auto* event = dynamic_cast<Cpu*>(&e);
  if (event == nullptr) throw Error(std::string(op) + ": an event of another backend");
  return *event;
}

}  // namespace

void CpuStream::upload(std::span<const std::byte> host, const Tensor& dst) {
  const std::span<std::byte> device = host_bytes("upload", "dst", dst);
  expect_same_size("upload", host.size(), dst);
  if (!host.empty()) std::memcpy(device.data(), host.data(), host.size());
}

void CpuStream::download(const Tensor& src, std::span<std::byte> host) {
  const std::span<std::byte> device = host_bytes("download", "src", src);
  expect_same_size("download", host.size(), src);
  if (!host.empty()) std::memcpy(host.data(), device.data(), host.size());
}

void CpuStream::copy(const Tensor& src, const Tensor& dst) {
  if (src.type != dst.type || src.rows != dst.rows || src.cols != dst.cols) {
    throw Error("copy: src is " + describe(src) + " and dst " + describe(dst) +
                "; they must match");
  }
  const std::span<std::byte> from = host_bytes("copy", "src", src);
  const std::span<std::byte> to = host_bytes("copy", "dst", dst);
  if (!from.empty()) std::memmove(to.data(), from.data(), from.size());
}

std::shared_ptr<Event> CpuStream::make_event() {
  return std::make_shared<CpuEvent>();
}

void CpuStream::record(Event& event) {
  cpu_event("record", event).at = std::chrono::steady_clock::now();
}

double CpuStream::seconds_between(const Event& start, const Event& end) const {
  return std::chrono::duration<double>(cpu_event("seconds_between", end).at -
                                       cpu_event("seconds_between", start).at)
      .count();
}

}  // namespace cocktail::cpu
