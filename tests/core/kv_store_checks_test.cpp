// The rules every KV store applies before touching its memory (kv_store_checks.hpp), and the
// host's record of a commit's tiles that every store reports from (stored_tiles.hpp).
#include "cocktail/kv_store_checks.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "cocktail/error.hpp"
#include "cocktail/gather_table.hpp"
#include "cocktail/stored_tiles.hpp"

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

KvStoreOptions options_of(KvShape shape, std::int64_t max_tokens = 0) {
  return {shape, KvQuantLayout{}, max_tokens};
}

TEST(KvStoreChecks, RefusesShapesAndGroupsTheTilesCannotHold) {
  EXPECT_NO_THROW(check_kv_store_options(options_of({2, 2, 64})));
  EXPECT_THROW(check_kv_store_options(options_of({0, 2, 64})), Error);
  EXPECT_THROW(check_kv_store_options(options_of({2, 2, 48})), Error);
  KvStoreOptions odd_groups = options_of({2, 2, 64});
  odd_groups.layout.group_size = 48;
  EXPECT_THROW(check_kv_store_options(odd_groups), Error);
}

TEST(KvStoreChecks, AppendNeedsALayerRowsOfTheShapeAndRoomUnderMaxTokens) {
  const KvStoreOptions options = options_of({2, 2, 64}, 100);
  const std::vector<std::int64_t> held = {90, 90};
  EXPECT_NO_THROW(check_kv_append(options, held, 1, 10, 10 * 128, 10 * 128));
  EXPECT_THROW(check_kv_append(options, held, 2, 1, 128, 128), Error);
  EXPECT_THROW(check_kv_append(options, held, -1, 1, 128, 128), Error);
  EXPECT_THROW(check_kv_append(options, held, 0, 1, 128, 64), Error);
  EXPECT_THROW(check_kv_append(options, held, 0, 11, 11 * 128, 11 * 128), Error);
  EXPECT_THROW(check_kv_head(options.shape, 1, 2), Error);
  EXPECT_NO_THROW(check_kv_head(options.shape, 1, 1));
}

TEST(KvStoreChecks, PrecisionsOnlyGoDownFromFp16OrInt8) {
  for (Precision from : kAllPrecisions) {
    for (Precision to : kAllPrecisions) {
      const bool want =
          from == to || (to > from && (from == Precision::fp16 || from == Precision::int8));
      EXPECT_EQ(can_requantize(from, to), want) << to_string(from) << " to " << to_string(to);
    }
  }
}

TEST(KvStoreChecks, CommitKeepsCommittedChunksAndCoversOnlyStoredTokens) {
  const Plan committed = plan_of({{32, Precision::fp16}, {32, Precision::int4}});
  const std::vector<std::int64_t> held = {80, 80};
  EXPECT_NO_THROW(
      check_commit(plan_of({{32, Precision::int8}, {32, Precision::int4}, {16, Precision::fp16}}),
                   committed, held));
  // Raised, requantized from INT4, fewer chunks, another span, more tokens than stored, layers
  // apart.
  EXPECT_THROW(
      check_commit(plan_of({{32, Precision::fp16}, {32, Precision::int8}}), committed, held),
      Error);
  EXPECT_THROW(
      check_commit(plan_of({{32, Precision::fp16}, {32, Precision::int2}}), committed, held),
      Error);
  EXPECT_THROW(check_commit(plan_of({{32, Precision::fp16}}), committed, held), Error);
  EXPECT_THROW(
      check_commit(plan_of({{16, Precision::fp16}, {48, Precision::int4}}), committed, held),
      Error);
  EXPECT_THROW(
      check_commit(plan_of({{32, Precision::fp16}, {32, Precision::int4}, {32, Precision::int4}}),
                   committed, held),
      Error);
  const std::vector<std::int64_t> apart = {80, 79};
  EXPECT_THROW(check_commit(committed, committed, apart), Error);
}

// Over 100 tokens: INT4 (40 tokens: a full tile and an 8-token one), FP16 (32), INT4 (20), and
// an 8-token FP16 remainder that stays in the tail.
TEST(StoredTiles, ListPositionsSegmentsAndBytesInStorageOrder) {
  const Plan plan = plan_of(
      {{40, Precision::int4}, {32, Precision::fp16}, {20, Precision::int4}, {8, Precision::fp16}});
  const GatherTable table = make_gather_table(plan, Plan{}, 32);
  const TileLists tiles = tile_lists(table);
  ASSERT_EQ(tiles[std::size_t(Precision::fp16)].size(), 1u);
  ASSERT_EQ(tiles[std::size_t(Precision::int4)].size(), 3u);
  EXPECT_EQ(tiles[std::size_t(Precision::int4)][1].first_position, 32);
  EXPECT_EQ(tiles[std::size_t(Precision::int4)][1].valid, 8);

  std::vector<std::int64_t> want;
  for (std::int64_t t = 40; t < 72; ++t) want.push_back(t);   // FP16 chunk
  for (std::int64_t t = 0; t < 40; ++t) want.push_back(t);    // first INT4 chunk
  for (std::int64_t t = 72; t < 92; ++t) want.push_back(t);   // second INT4 chunk
  for (std::int64_t t = 92; t < 103; ++t) want.push_back(t);  // the tail, with 3 more tokens
  EXPECT_EQ(storage_positions(tiles, table.n_committed, 103), want);

  const KvShape shape{2, 2, 64};
  TileBytes tile_bytes{};
  tile_bytes[std::size_t(Precision::fp16)] = 1000;
  tile_bytes[std::size_t(Precision::int4)] = 100;
  const std::vector<SegmentInfo> segments = segment_infos(tiles, tile_bytes, shape, 11);
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_EQ(segments[0].precision, Precision::fp16);
  EXPECT_EQ(segments[0].n_tokens, 32);
  EXPECT_EQ(segments[0].bytes, 1000u * 4);
  EXPECT_EQ(segments[1].precision, Precision::int4);
  EXPECT_EQ(segments[1].n_tokens, 60);
  EXPECT_EQ(segments[1].bytes, 3 * 100u * 4);
  EXPECT_EQ(segments[2].n_tokens, 11);
  const std::size_t tail_row = shape.token_floats() * 2 * 2;
  EXPECT_EQ(segments[2].bytes, 11 * tail_row * 2);

  // Layer 1 is one token behind layer 0: bytes() counts each layer's own tail rows.
  const std::vector<std::int64_t> layer_tokens = {103, 102};
  EXPECT_EQ(stored_bytes(tiles, tile_bytes, shape, layer_tokens, table.n_committed),
            1000u * 4 + 300u * 4 + (11 + 10) * tail_row);
}

}  // namespace
}  // namespace cocktail
