#pragma once

#include <cstddef>
#include <string>

namespace cocktail {

// How well something can run on this machine: score 0 means it cannot, and `reason` says why.
// `backend = "auto"` picks the highest score.
struct Availability {
  int score = 0;
  std::string reason;
};

// One device a backend can run on, as a cheap probe reports it: no context is made for it.
struct DeviceInfo {
  std::string name;
  std::size_t memory_bytes = 0;
  Availability availability;
};

}  // namespace cocktail
