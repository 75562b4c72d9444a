// Each GPU backend plugin this build made loads through the registry and says where it can run.
// Here (no GPU, often no driver) it cannot, and says why; on a machine with a GPU the same tests
// check that it runs there instead.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "cocktail/backend_provider.hpp"
#include "cocktail/error.hpp"
#include "cocktail/options.hpp"
#include "cocktail/plugin_registry.hpp"
#include "cocktail/stream.hpp"
#include "cocktail/tensor.hpp"
#include "run_cli.hpp"
#include "support/error_of.hpp"

namespace cocktail {
namespace {

using testing::error_of;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

std::vector<std::string> built_gpu_backends() {
  std::vector<std::string> names;
  std::string list = COCKTAIL_GPU_BACKENDS;
  for (std::size_t start = 0; start < list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    names.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

const PluginRegistry& registry() {
  static const PluginRegistry plugins;
  return plugins;
}

// What a machine without the GPU lacks, in the words the provider uses.
constexpr const char* kMissing =
    ".*(no (CUDA|HIP) (driver|device)|no code for .* in this build|driver .* is older than).*";

class GpuPlugin : public ::testing::TestWithParam<std::string> {
 protected:
  std::shared_ptr<BackendProvider> provider() const {
    return registry().make_backend_provider(GetParam());
  }
};

TEST_P(GpuPlugin, LoadsThroughTheRegistry) {
  const std::vector<PluginInfo> backends = registry().plugins_of(PluginKind::backend);
  const auto found = std::find_if(backends.begin(), backends.end(),
                                  [&](const PluginInfo& p) { return p.name == GetParam(); });
  ASSERT_NE(found, backends.end()) << "no backend plugin '" << GetParam() << "' was found";
  EXPECT_EQ(found->file.filename(), "cocktail-backend-" + GetParam() + ".so");
  for (const PluginRejection& r : registry().rejections()) {
    EXPECT_THAT(r.file.filename().string(), ::testing::Not(HasSubstr(GetParam()))) << r.reason;
  }
}

TEST_P(GpuPlugin, ItsTableTakesNoKeys) {
  Options options("backend." + GetParam(), {"test.toml", 3});
  options.set("threads", std::int64_t(4), {"test.toml", 4});
  EXPECT_THAT(error_of<Error>([&] { registry().make_backend_provider(GetParam(), &options); }),
              HasSubstr("threads"));
}

TEST_P(GpuPlugin, SaysWhyItCannotRunOrRuns) {
  const auto gpu = provider();
  const Availability availability = gpu->availability();
  const std::vector<DeviceInfo> devices = gpu->devices();
  const bool any_device_runs = std::any_of(
      devices.begin(), devices.end(), [](const DeviceInfo& d) { return d.availability.score > 0; });
  EXPECT_EQ(availability.score > 0, any_device_runs) << availability.reason;
  if (availability.score <= 0) {
    EXPECT_EQ(availability.score, 0);
    EXPECT_THAT(availability.reason, MatchesRegex(kMissing));
    for (const DeviceInfo& d : devices) EXPECT_THAT(d.availability.reason, MatchesRegex(kMissing));
    const std::string error = error_of<Error>([&] { gpu->make_backend(0); });
    EXPECT_THAT(error, HasSubstr("backend '" + GetParam() + "' cannot run"));
    EXPECT_THAT(error, MatchesRegex(kMissing));
    return;
  }
  // A GPU that runs wins `backend = "auto"` over the CPU backend's 10.
  EXPECT_GT(availability.score, 10) << availability.reason;
  const int index = pick_device(devices, "", GetParam());
  const std::shared_ptr<Backend> backend = gpu->make_backend(index);
  EXPECT_EQ(backend->name(), GetParam());
  EXPECT_EQ(backend->device().name, devices[std::size_t(index)].name);
  EXPECT_THAT(error_of<Error>([&] { gpu->make_backend(int(devices.size())); }),
              HasSubstr("there is no device"));
}

// On a GPU: device memory round-trips through a stream, host memory is no device memory, and
// the bandwidth probe reads.
TEST_P(GpuPlugin, RunsWhereItSaysItCan) {
  const auto gpu = provider();
  if (gpu->availability().score <= 0) GTEST_SKIP() << gpu->availability().reason;
  const auto backend = gpu->make_backend(pick_device(gpu->devices(), "", GetParam()));
  const auto stream = backend->make_stream();
  const std::vector<float> host{1.0f, -2.5f, 3.25f, 1e-3f};
  const std::shared_ptr<Buffer> buffer = backend->allocate(host.size() * sizeof(float));
  const Tensor t{buffer.get(), 0, ElementType::f32, 1, std::int64_t(host.size())};
  upload(*stream, std::span<const float>(host), t);
  std::vector<float> back(host.size());
  download(*stream, t, std::span<float>(back));
  stream->synchronize();
  EXPECT_EQ(back, host);

  std::vector<float> not_device(16);
  EXPECT_THAT(error_of<Error>([&] { backend->wrap_memory(not_device.data(), 64); }),
              HasSubstr("wrap_memory"));
  EXPECT_GT(backend->measure_read_bandwidth(std::size_t(64) << 20), 1e9);
}

TEST_P(GpuPlugin, CliListsItWithItsReason) {
  const nlohmann::json backends = testing::json_of(testing::run_cli({"backends", "--json"}));
  const auto entry = std::find_if(backends.begin(), backends.end(), [&](const nlohmann::json& b) {
    return b.at("name") == GetParam();
  });
  ASSERT_NE(entry, backends.end()) << backends.dump(2);
  const Availability availability = provider()->availability();
  EXPECT_EQ(entry->at("available"), availability.score > 0);
  EXPECT_EQ(entry->at("reason"), availability.reason);
}

// Asked for by name, a GPU backend that cannot run is an error naming why, never the CPU.
TEST_P(GpuPlugin, EngineAskedForItDoesNotFallBack) {
  const Availability availability = provider()->availability();
  if (availability.score > 0) GTEST_SKIP() << "it runs here: " << availability.reason;
  const testing::CliResult result =
      testing::run_cli({"plan", "--set", "engine.backend=" + GetParam()});
  EXPECT_NE(result.exit_code, 0) << result.out;
  EXPECT_THAT(result.err,
              HasSubstr("backend '" + GetParam() + "' cannot run here: " + availability.reason));
}

INSTANTIATE_TEST_SUITE_P(Built, GpuPlugin, ::testing::ValuesIn(built_gpu_backends()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuPlugin);

}  // namespace
}  // namespace cocktail
