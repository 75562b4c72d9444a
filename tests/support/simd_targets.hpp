#pragma once

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cstdint>

#include "simd_target.hpp"

namespace cocktail::testing {

// Runs body(target bit) once with each SIMD target the CPU backend has kernels for and this CPU
// runs forced as the only one, so that every dispatched kernel is tested, not only the best;
// then restores normal dispatch. Fails the test when no target ran.
template <class Body>
void for_each_simd_target(Body&& body) {
  const auto& targets = cpu::runnable_simd_targets();
  EXPECT_FALSE(targets.empty());
  for (const std::int64_t bit : targets) {
    hwy::SetSupportedTargetsForTest(bit);
    SCOPED_TRACE(hwy::TargetName(bit));
    body(bit);
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace cocktail::testing
