// Which devices a GPU build has code for: NVIDIA's compatibility rules for machine code, PTX and
// arch-specific targets, and AMD's processor names with their feature suffixes.

#include "runtime/gpu_arch.hpp"

#include <gtest/gtest.h>

namespace cocktail::gpu {
namespace {

constexpr const char* kCudaBuild = "sm_80,sm_90a";
constexpr const char* kHipBuild = "gfx90a,gfx1030";

TEST(GpuArch, MachineCodeRunsOnLaterMinorVersionsOfItsMajor) {
  EXPECT_TRUE(has_code_for(kCudaBuild, "sm_80"));
  EXPECT_TRUE(has_code_for(kCudaBuild, "sm_86"));
  EXPECT_TRUE(has_code_for(kCudaBuild, "sm_89"));
  EXPECT_FALSE(has_code_for(kCudaBuild, "sm_75"));
  EXPECT_FALSE(has_code_for("sm_86", "sm_80"));
}

TEST(GpuArch, ArchSpecificCodeRunsOnItsOwnVersionOnly) {
  EXPECT_TRUE(has_code_for(kCudaBuild, "sm_90"));
  EXPECT_FALSE(has_code_for("sm_90a", "sm_100"));
  EXPECT_FALSE(has_code_for(kCudaBuild, "sm_100"));
  EXPECT_FALSE(has_code_for(kCudaBuild, "sm_120"));
}

TEST(GpuArch, PtxRunsOnEveryLaterDevice) {
  EXPECT_TRUE(has_code_for("compute_80", "sm_120"));
  EXPECT_TRUE(has_code_for("compute_80", "sm_80"));
  EXPECT_FALSE(has_code_for("compute_90", "sm_89"));
  EXPECT_FALSE(has_code_for("compute_90a", "sm_100"));
}

TEST(GpuArch, FamilyCodeRunsOnItsFamily) {
  EXPECT_TRUE(has_code_for("sm_100f", "sm_103"));
  EXPECT_FALSE(has_code_for("sm_100f", "sm_120"));
}

TEST(GpuArch, AmdCodeRunsOnItsProcessorWhateverItsFeatures) {
  EXPECT_TRUE(has_code_for(kHipBuild, "gfx90a:sramecc+:xnack-"));
  EXPECT_TRUE(has_code_for(kHipBuild, "gfx1030"));
  EXPECT_FALSE(has_code_for(kHipBuild, "gfx1031"));
  EXPECT_FALSE(has_code_for(kHipBuild, "gfx942:sramecc+:xnack-"));
  EXPECT_FALSE(has_code_for(kHipBuild, "sm_90"));
  EXPECT_FALSE(has_code_for(kCudaBuild, "gfx90a"));
}

TEST(GpuArch, NamesThatAreNoTargetMatchNothing) {
  EXPECT_FALSE(has_code_for("", "sm_90"));
  EXPECT_FALSE(has_code_for(kCudaBuild, ""));
  EXPECT_FALSE(has_code_for("sm_", "sm_"));
  EXPECT_FALSE(has_code_for("sm_9x", "sm_9x"));
}

TEST(GpuArch, DescribesTheTargetsForMessages) {
  EXPECT_EQ(describe_targets(kCudaBuild), "sm_80, sm_90a");
  EXPECT_EQ(describe_targets("gfx90a"), "gfx90a");
}

}  // namespace
}  // namespace cocktail::gpu
