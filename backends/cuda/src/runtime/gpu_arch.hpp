#pragma once

// Which devices a build's device code runs on, decided from the list of targets it was compiled
// for (COCKTAIL_GPU_ARCHS, set by CMake) and the device's architecture, without asking the
// runtime: listing devices must make no context. Plain C++, so the CPU tests check the rules.

#include <charconv>
#include <string>
#include <string_view>

namespace cocktail::gpu {

namespace arch_detail {

// "sm_90a" → major 9, minor 0, suffix 'a'; "compute_80" → 8, 0, PTX. The last digit is the
// minor version, the ones before it the major.
struct NvidiaTarget {
  bool ptx = false;
  int major = -1;
  int minor = -1;
  char suffix = 0;  // 'a': this exact device only; 'f': its family (same major, minor at least)
};

inline bool parse_nvidia(std::string_view name, NvidiaTarget& target) {
  if (name.starts_with("sm_")) {
    name.remove_prefix(3);
  } else if (name.starts_with("compute_")) {
    name.remove_prefix(8);
    target.ptx = true;
  } else {
    return false;
  }
  if (!name.empty() && (name.back() == 'a' || name.back() == 'f')) {
    target.suffix = name.back();
    name.remove_suffix(1);
  }
  if (name.size() < 2) return false;
  int version = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), version);
  if (error != std::errc() || end != name.data() + name.size()) return false;
  target.major = version / 10;
  target.minor = version % 10;
  return true;
}

// Whether code for `built` runs on `device` (a plain sm_XY), as NVIDIA's compatibility rules
// say: machine code runs on later minor versions of its major version, PTX is compiled by the
// driver for any later device, and arch-specific ('a') code runs on its own version alone.
inline bool nvidia_runs(const NvidiaTarget& built, const NvidiaTarget& device) {
  const bool same = built.major == device.major && built.minor == device.minor;
  if (built.suffix == 'a') return same;
  if (built.ptx) {
    return device.major > built.major ||
           (device.major == built.major && device.minor >= built.minor);
  }
  return built.major == device.major && device.minor >= built.minor;
}

// "gfx90a:sramecc+:xnack-" → "gfx90a": code built without target features runs with any.
inline std::string_view amd_processor(std::string_view name) {
  return name.substr(0, name.find(':'));
}

inline bool runs(std::string_view built, std::string_view device) {
  NvidiaTarget b, d;
  if (parse_nvidia(built, b) && parse_nvidia(device, d)) return nvidia_runs(b, d);
  return built.starts_with("gfx") && amd_processor(built) == amd_processor(device);
}

}  // namespace arch_detail

// Whether a build whose device code targets `built` (comma-separated: "sm_80,sm_90a",
// "gfx90a,gfx1030") has code a device of architecture `device` ("sm_89",
// "gfx90a:sramecc+:xnack-") can run.
inline bool has_code_for(std::string_view built, std::string_view device) {
  while (!built.empty()) {
    const std::size_t comma = built.find(',');
    if (arch_detail::runs(built.substr(0, comma), device)) return true;
    built.remove_prefix(comma == std::string_view::npos ? built.size() : comma + 1);
  }
  return false;
}

// "sm_80, sm_90a": the targets, for messages.
inline std::string describe_targets(std::string_view built) {
  std::string out;
  for (const char c : built) {
    out += c;
    if (c == ',') out += ' ';
  }
  return out;
}

}  // namespace cocktail::gpu
