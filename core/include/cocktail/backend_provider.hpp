#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "cocktail/backend.hpp"
#include "cocktail/device.hpp"

namespace cocktail {

// What a backend plugin makes from its config table ([backend.<name>]): the devices of its
// kind on this machine, and a Backend on one of them. Making a provider and listing its
// devices initialise no device (a probe, as ggml's registry does): `cocktail backends` and the
// engine's choice make every provider, on machines where it cannot run.
class BackendProvider {
 public:
  virtual ~BackendProvider() = default;
  virtual std::string_view name() const = 0;
  // The best of its devices; with none (no driver, no device), score 0 and why.
  virtual Availability availability() const = 0;
  virtual std::vector<DeviceInfo> devices() const = 0;
  // A backend on devices()[device]. An Error naming the device and the reason when it cannot
  // run there.
  virtual std::shared_ptr<Backend> make_backend(int device) = 0;
};

// The index in `devices` that `wanted` names: an index ("1"), or a device's whole name; empty
// means the first device that can run. Throws Error listing the devices when none fits, or when
// the device named cannot run (with its reason).
int pick_device(const std::vector<DeviceInfo>& devices, const std::string& wanted,
                std::string_view backend);

}  // namespace cocktail
