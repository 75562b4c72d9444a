#include "cocktail/backend_provider.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cocktail/error.hpp"

namespace cocktail {

namespace {

std::string listing(const std::vector<DeviceInfo>& devices) {
  if (devices.empty()) return " none";
  std::string out;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const DeviceInfo& d = devices[i];
    out += fmt::format("\n  {}: {} ({})", i, d.name,
                       d.availability.score > 0 ? "can run" : d.availability.reason);
  }
  return out;
}

}  // namespace

int pick_device(const std::vector<DeviceInfo>& devices, const std::string& wanted,
                std::string_view backend) {
  std::ptrdiff_t index = -1;
  if (wanted.empty()) {
    const auto first = std::find_if(devices.begin(), devices.end(),
                                    [](const DeviceInfo& d) { return d.availability.score > 0; });
    index = first - devices.begin();
  } else if (std::all_of(wanted.begin(), wanted.end(),
                         [](char c) { return c >= '0' && c <= '9'; })) {
    index = wanted.size() < 10 ? std::stol(wanted) : std::ptrdiff_t(devices.size());
  } else {
    index = std::find_if(devices.begin(), devices.end(),
                         [&](const DeviceInfo& d) { return d.name == wanted; }) -
            devices.begin();
  }
  if (index < 0 || index >= std::ptrdiff_t(devices.size())) {
    throw Error(fmt::format(
        "backend '{}' has no {}; its devices:{}", backend,
        wanted.empty() ? std::string("device that can run") : fmt::format("device '{}'", wanted),
        listing(devices)));
  }
  const DeviceInfo& chosen = devices[std::size_t(index)];
  if (chosen.availability.score <= 0) {
    throw Error(fmt::format("backend '{}' cannot run on device {} ({}): {}", backend, index,
                            chosen.name, chosen.availability.reason));
  }
  return int(index);
}

}  // namespace cocktail
