// engine.device: picking a backend's device by index or name, and the errors that list the
// devices when the one named is not there or cannot run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cocktail/backend_provider.hpp"
#include "cocktail/config.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/error.hpp"
#include "support/error_of.hpp"

namespace cocktail {
namespace {

using ::testing::AllOf;
using testing::error_of;
using ::testing::HasSubstr;

const std::vector<DeviceInfo> kDevices = {
    {"Old GPU", 1 << 30, {0, "no code for its architecture"}},
    {"GPU A", 2u << 30, {20, "runs"}},
    {"GPU B", 2u << 30, {20, "runs"}},
};

TEST(PickDevice, FirstThatCanRunByDefault) {
  EXPECT_EQ(pick_device(kDevices, "", "gpu"), 1);
}

TEST(PickDevice, ByIndexOrWholeName) {
  EXPECT_EQ(pick_device(kDevices, "2", "gpu"), 2);
  EXPECT_EQ(pick_device(kDevices, "GPU B", "gpu"), 2);
}

TEST(PickDevice, ADeviceThatIsNotThereListsTheDevices) {
  EXPECT_THAT(error_of<Error>([] { pick_device(kDevices, "7", "gpu"); }),
              AllOf(HasSubstr("backend 'gpu' has no device '7'; its devices:"),
                    HasSubstr("\n  0: Old GPU (no code for its architecture)"),
                    HasSubstr("\n  1: GPU A (can run)"), HasSubstr("\n  2: GPU B (can run)")));
  EXPECT_THAT(error_of<Error>([] { pick_device(kDevices, "GPU", "gpu"); }),
              HasSubstr("has no device 'GPU'"));
  EXPECT_THAT(error_of<Error>([] { pick_device({}, "", "gpu"); }),
              HasSubstr("backend 'gpu' has no device that can run; its devices: none"));
}

TEST(PickDevice, ADeviceThatCannotRunSaysWhy) {
  EXPECT_THAT(error_of<Error>([] { pick_device(kDevices, "0", "gpu"); }),
              HasSubstr("backend 'gpu' cannot run on device 0 (Old GPU): no code for its "
                        "architecture"));
}

// The engine runs on the device the config names, by index or by the name `backends` lists.
TEST(EngineDevice, TheConfigPicksTheCpuDeviceByIndexOrName) {
  const std::string base = "[engine]\nbackend = \"cpu\"\nscorer = \"bm25\"\n";
  const Engine by_index(parse_config(base + "device = 0\n", "device.toml"));
  const std::string name = by_index.backend()->device().name;
  const Engine by_name(parse_config(base + "device = \"" + name + "\"\n", "device.toml"));
  EXPECT_EQ(by_name.backend()->device().name, name);
  EXPECT_THAT(error_of<Error>([&] { Engine(parse_config(base + "device = 1\n", "device.toml")); }),
              HasSubstr("backend 'cpu' has no device '1'"));
}

}  // namespace
}  // namespace cocktail
