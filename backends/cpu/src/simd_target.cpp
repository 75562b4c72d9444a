#include "simd_target.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cocktail/error.hpp"

namespace cocktail::cpu {
namespace {

// Highway's bit for the target called `name`; 0 when no target has that name.
std::int64_t target_bit(const std::string& name) {
  for (int bit = 0; bit < 63; ++bit) {
    const std::int64_t target = std::int64_t(1) << bit;
    if (name == hwy::TargetName(target)) return target;
  }
  return 0;
}

// "AVX3_DL, AVX3, AVX2, ...": what the errors offer instead.
std::string runnable_names() {
  std::vector<std::string> names;
  for (const std::int64_t target : runnable_simd_targets())
    names.emplace_back(hwy::TargetName(target));
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

// Read once: once a selection is made, Highway reports only the selected target.
const std::vector<std::int64_t>& runnable_simd_targets() {
  static const std::vector<std::int64_t> targets = [] {
    hwy::SetSupportedTargetsForTest(0);
    return hwy::SupportedAndGeneratedTargets();
  }();
  return targets;
}

void select_simd_target(const std::string& name) {
  const std::vector<std::int64_t>& runnable = runnable_simd_targets();
  if (name == "auto") {
    hwy::SetSupportedTargetsForTest(0);
    return;
  }
  const std::int64_t target = target_bit(name);
  if (target == 0) {
    throw Error(
        fmt::format("not a SIMD target Highway has for this architecture; this CPU runs: {} "
                    "(or \"auto\")",
                    runnable_names()));
  }
  if ((target & HWY_TARGETS) == 0) {
    throw Error(
        fmt::format("this build has no kernels for it; this CPU runs: {}", runnable_names()));
  }
  if (std::find(runnable.begin(), runnable.end(), target) == runnable.end()) {
    throw Error(fmt::format("this CPU cannot run it; it runs: {}", runnable_names()));
  }
  hwy::SetSupportedTargetsForTest(target);
}

}  // namespace cocktail::cpu
