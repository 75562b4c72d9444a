#pragma once

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cstdint>

namespace cocktail::testing {

// Runs body(target bit) once with each SIMD target this CPU supports forced as the only one,
// so that every dispatched kernel is tested, not only the best; then restores normal dispatch.
// Fails the test when no target ran.
template <class Body>
void for_each_simd_target(Body&& body) {
  const std::int64_t supported = hwy::SupportedTargets();
  int targets = 0;
  for (std::int64_t bit = 1; bit != 0 && bit <= supported; bit <<= 1) {
    if ((supported & bit) == 0) continue;
    ++targets;
    hwy::SetSupportedTargetsForTest(bit);
    SCOPED_TRACE(hwy::TargetName(bit));
    body(bit);
  }
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_GE(targets, 1);
}

}  // namespace cocktail::testing
