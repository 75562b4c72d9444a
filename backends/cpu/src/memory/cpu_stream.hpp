#pragma once

#include <chrono>
#include <memory>

#include "cocktail/stream.hpp"

namespace cocktail::cpu {

// The CPU backend's stream: its work runs inside each call, so a call returns with its work
// done, synchronize() has nothing to wait for, and an event is the time it was recorded.
class CpuStream final : public Stream {
 public:
  void upload(std::span<const std::byte> host, const Tensor& dst) override;
  void download(const Tensor& src, std::span<std::byte> host) override;
  void copy(const Tensor& src, const Tensor& dst) override;
  void synchronize() override {}
  std::shared_ptr<Event> make_event() override;
  void record(Event& event) override;
  double seconds_between(const Event& start, const Event& end) const override;
};

}  // namespace cocktail::cpu
