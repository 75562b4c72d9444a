#include "cocktail/eval/plot_axis.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cocktail::eval {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;

TEST(PlotAxisTest, UnitRangeInQuarters) {
  const PlotAxis axis = nice_axis(0.0, 1.0);
  EXPECT_DOUBLE_EQ(axis.step, 0.25);
  EXPECT_THAT(axis.ticks, ElementsAre(0.0, 0.25, 0.5, 0.75, 1.0));
  EXPECT_EQ(axis.label(0.75), "0.75");
  EXPECT_EQ(axis.label(0.0), "0.00");
}

TEST(PlotAxisTest, BitsRangeWidensToRoundEnds) {
  // Step 14/4 = 3.5 rounds up to 5; 2..16 widens to 0..20.
  const PlotAxis axis = nice_axis(2.0, 16.0);
  EXPECT_THAT(axis.ticks, ElementsAre(0.0, 5.0, 10.0, 15.0, 20.0));
  EXPECT_EQ(axis.label(15.0), "15");
  EXPECT_DOUBLE_EQ(axis.fraction(16.0), 0.8);
}

TEST(PlotAxisTest, SmallValuesGetDecimalSteps) {
  // Step 0.074/4 = 0.0185 rounds up to 0.02.
  const PlotAxis axis = nice_axis(0.013, 0.087);
  EXPECT_DOUBLE_EQ(axis.step, 0.02);
  ASSERT_EQ(axis.ticks.size(), 6u);
  EXPECT_THAT(axis.ticks.back(), DoubleNear(0.1, 1e-12));
  EXPECT_EQ(axis.label(axis.ticks[3]), "0.06");
}

TEST(PlotAxisTest, OneValueGetsAUnitWideAxis) {
  const PlotAxis axis = nice_axis(3.0, 3.0);
  EXPECT_DOUBLE_EQ(axis.lo, 2.5);
  EXPECT_DOUBLE_EQ(axis.hi, 3.5);
  EXPECT_DOUBLE_EQ(axis.fraction(3.0), 0.5);
}

TEST(PlotAxisTest, LogAxisRunsFromDecadeToDecade) {
  const PlotAxis axis = log_axis(0.003, 0.2);
  EXPECT_DOUBLE_EQ(axis.lo, 0.001);
  EXPECT_DOUBLE_EQ(axis.hi, 1.0);
  ASSERT_EQ(axis.ticks.size(), 4u);
  EXPECT_EQ(axis.label(axis.ticks[0]), "0.001");
  EXPECT_EQ(axis.label(axis.ticks[3]), "1");
  EXPECT_NEAR(axis.fraction(0.01), 1.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(axis.fraction(0.0), 0.0);
  // One value, or values within a decade, still get a whole decade.
  const PlotAxis one = log_axis(0.05, 0.05);
  EXPECT_DOUBLE_EQ(one.lo, 0.01);
  EXPECT_DOUBLE_EQ(one.hi, 0.1);
}

TEST(PlotAxisTest, NegativeZeroPrintsAsZero) {
  const PlotAxis axis = nice_axis(-1.0, 1.0);
  EXPECT_EQ(axis.label(-0.0), "0.0");
}

}  // namespace
}  // namespace cocktail::eval
