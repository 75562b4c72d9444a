#include "cocktail/operating_point.hpp"

#include <gtest/gtest.h>

#include "cocktail/error.hpp"

namespace cocktail {
namespace {

// A planner may leave the context's newest tokens out of its plan (recency's recent window):
// they stay in the FP16 tail, and the code bits must count them as FP16.
TEST(OperatingPoint, CountsTokensAfterThePlanAsFp16) {
  const Plan plan = fixed_size_chunks(64, 32, Precision::int4);
  const OperatingPoint point = operating_point(plan, 96, 1000, 4000);
  EXPECT_EQ(point.context_tokens, 96);
  EXPECT_DOUBLE_EQ(point.token_share.at(Precision::int4), 64.0 / 96.0);
  EXPECT_DOUBLE_EQ(point.token_share.at(Precision::fp16), 32.0 / 96.0);
  EXPECT_DOUBLE_EQ(point.avg_code_bits(), 8.0);  // (64 x 4 + 32 x 16) / 96
  EXPECT_EQ(point.chunks.at(Precision::int4), 2);
  EXPECT_FALSE(point.chunks.contains(Precision::fp16));  // the tail is not a chunk
  EXPECT_DOUBLE_EQ(point.kv_bytes_ratio(), 0.25);
}

TEST(OperatingPoint, APlanCoveringTheContextHasOnlyItsPrecisions) {
  Plan plan = fixed_size_chunks(64, 32, Precision::int2);
  plan.chunks[1].precision = Precision::fp16;
  const OperatingPoint point = operating_point(plan, 64, 0, 0);
  EXPECT_DOUBLE_EQ(point.token_share.at(Precision::int2), 0.5);
  EXPECT_DOUBLE_EQ(point.token_share.at(Precision::fp16), 0.5);
  EXPECT_DOUBLE_EQ(point.avg_code_bits(), 9.0);
}

TEST(OperatingPoint, RefusesAPlanLongerThanTheContext) {
  const Plan plan = fixed_size_chunks(64, 32, Precision::int4);
  try {
    (void)operating_point(plan, 63, 0, 0);
    FAIL() << "a plan of 64 tokens over a context of 63 was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "operating point: the plan covers 64 tokens, more than the context's 63");
  }
}

}  // namespace
}  // namespace cocktail
