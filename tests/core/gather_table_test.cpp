// The host's half of a commit: which tokens each tile of each segment gathers, and from where.
#include "cocktail/gather_table.hpp"

#include <gtest/gtest.h>

namespace cocktail {
namespace {

Plan plan_of(std::initializer_list<std::pair<int, Precision>> chunks) {
  Plan plan;
  std::int64_t first = 0;
  for (const auto& [tokens, precision] : chunks) {
    plan.chunks.push_back({int(plan.chunks.size()), first, tokens, 0.0, precision});
    first += tokens;
  }
  return plan;
}

struct Expected {
  std::int64_t first_position;
  int valid;
  GatherSource::Place place;
  Precision from;
  std::int64_t index;
};

void expect_segment(const GatherTable& table, Precision p, std::vector<Expected> want) {
  const std::vector<GatherTile>& got = table.segment(p);
  ASSERT_EQ(got.size(), want.size()) << to_string(p);
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(std::string(to_string(p)) + " tile " + std::to_string(i));
    EXPECT_EQ(got[i].first_position, want[i].first_position);
    EXPECT_EQ(got[i].valid, want[i].valid);
    EXPECT_EQ(got[i].source.place, want[i].place);
    EXPECT_EQ(got[i].source.precision, want[i].from);
    EXPECT_EQ(got[i].source.index, want[i].index);
  }
}

constexpr auto kTail = GatherSource::Place::tail;
constexpr auto kSegment = GatherSource::Place::segment;

// A first commit: chunks go to their precision's segment in token order, a chunk longer than
// a tile takes two (the second partial), every row comes from the tail at its own position,
// and a last FP16 chunk shorter than a tile stays in the tail.
TEST(GatherTable, FirstCommitReordersByPrecisionFromTheTail) {
  const Plan plan = plan_of({{32, Precision::int2},
                             {40, Precision::fp16},
                             {32, Precision::int4},
                             {32, Precision::int2},
                             {10, Precision::fp16}});
  const GatherTable table = make_gather_table(plan, Plan{}, 32);
  EXPECT_EQ(table.committed_before, 0);
  EXPECT_EQ(table.n_committed, 136);
  expect_segment(table, Precision::fp16,
                 {{32, 32, kTail, Precision::fp16, 32}, {64, 8, kTail, Precision::fp16, 64}});
  expect_segment(table, Precision::int4, {{72, 32, kTail, Precision::fp16, 72}});
  expect_segment(table, Precision::int2,
                 {{0, 32, kTail, Precision::fp16, 0}, {104, 32, kTail, Precision::fp16, 104}});
}

// A re-plan that lowers one chunk and adds two: kept chunks copy their old tiles (found by
// their place in the old layout), the lowered one is requantized from its old tile, and new
// chunks come from the tail rows after the old commit.
TEST(GatherTable, ReplanReadsOldTilesAndTheRestOfTheTail) {
  const Plan before =
      plan_of({{32, Precision::fp16}, {32, Precision::int4}, {32, Precision::fp16}});
  const Plan after = plan_of({{32, Precision::fp16},
                              {32, Precision::int4},
                              {32, Precision::int2},
                              {32, Precision::int4},
                              {16, Precision::fp16}});
  const GatherTable table = make_gather_table(after, before, 32);
  EXPECT_EQ(table.committed_before, 96);
  EXPECT_EQ(table.n_committed, 128);
  expect_segment(table, Precision::fp16, {{0, 32, kSegment, Precision::fp16, 0}});
  expect_segment(table, Precision::int4,
                 {{32, 32, kSegment, Precision::int4, 0}, {96, 32, kTail, Precision::fp16, 0}});
  expect_segment(table, Precision::int2, {{64, 32, kSegment, Precision::fp16, 1}});
}

}  // namespace
}  // namespace cocktail
