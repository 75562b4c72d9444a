// The suite tests what it should: the CPU backend is found on the default search path, and
// every extra plugin the build names is loaded (a file refused or missing would otherwise go
// untested without a word).

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "conformance.hpp"

namespace cocktail::conformance {
namespace {

TEST(ConformanceDiscovery, FindsTheCpuBackendAndEveryExtraPlugin) {
  const std::vector<std::string> names = backend_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu"), names.end());
  for (const std::filesystem::path& file : extra_plugins()) {
    const bool loaded = std::any_of(registry().plugins().begin(), registry().plugins().end(),
                                    [&](const PluginInfo& info) {
                                      std::error_code error;
                                      return std::filesystem::equivalent(info.file, file, error);
                                    });
    std::string why = "it is missing";
    for (const PluginRejection& r : registry().rejections()) {
      if (r.file == file) why = r.reason;
    }
    EXPECT_TRUE(loaded) << file << " was not loaded: " << why;
  }
}

// The CPU backend runs the suite once more on each SIMD target it has here besides the one
// "cpu" runs ("cpu@AVX2", ...), and each of those backends really runs on its target.
TEST(ConformanceDiscovery, TheCpuBackendRunsOnEverySimdTargetOfThisCpu) {
  const std::vector<std::string> targets = cpu_simd_targets();
#if defined(__x86_64__)
  // Every x86-64 build has kernels for two targets at least: the scalar one and one SIMD target.
  ASSERT_GE(targets.size(), 2u) << "a CPU backend with fewer than two SIMD targets";
#else
  // An Arm build has NEON alone (cross-check-arm64): the suite runs it once, as "cpu".
  ASSERT_FALSE(targets.empty()) << "a CPU backend with no SIMD target";
#endif
  const std::vector<std::string> names = backend_names();
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const std::string name = i == 0 ? "cpu" : "cpu@" + targets[i];
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    EXPECT_EQ(make_provider(name)->availability().reason,
              "runs on this CPU with SIMD target " + targets[i]);
  }
}

}  // namespace
}  // namespace cocktail::conformance
