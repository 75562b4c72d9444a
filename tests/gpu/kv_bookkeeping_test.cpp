// What the GPU stores (CUDA/HIP and Vulkan) keep on the host (gpu_common/kv_bookkeeping.hpp):
// tokens per layer, the version that decode plans are made at, the tail's size, and what a copy
// and a failed commit are told.
#include "gpu_common/kv_bookkeeping.hpp"

#include <gtest/gtest.h>

#include "cocktail/error.hpp"
#include "cocktail/gather_table.hpp"
#include "support/error_of.hpp"

namespace cocktail::gpu {
namespace {

using testing::error_of;

struct NoMemory final : Buffer {
  std::size_t size() const override { return 0; }
};

constexpr KvShape kShape{2, 2, 64};

Plan one_chunk(int tokens, Precision p) {
  Plan plan;
  plan.chunks.push_back({0, 0, tokens, 0.0, p});
  return plan;
}

void commit(KvBookkeeping& books, const Plan& plan) {
  books.check_commit(plan);
  const GatherTable table =
      make_gather_table(plan, books.plan(), books.options().layout.group_size);
  books.committed(plan, table.n_committed, tile_lists(table));
}

TEST(KvBookkeeping, CountsTokensAndChangesVersionOnLayerZeroMovesAndCommits) {
  KvBookkeeping books({kShape, KvQuantLayout{}, 0});
  NoMemory memory;
  const Tensor rows{&memory, 0, ElementType::f32, 40, std::int64_t(kShape.token_floats())};
  books.check_append(1, rows, rows);
  EXPECT_THROW(books.check_append(1, rows, {&memory, 0, ElementType::f32, 40, 64}), Error);
  EXPECT_THROW(books.check_append(2, rows, rows), Error);

  books.appended(1, 40);
  EXPECT_EQ(books.version(), 0u);
  books.appended(0, 40);
  EXPECT_EQ(books.version(), 1u);
  books.tail_moved();
  EXPECT_EQ(books.version(), 2u);
  EXPECT_EQ(books.n_tokens(), 40);
  EXPECT_EQ(books.layer_tokens(1), 40);
  EXPECT_THROW(books.layer_tokens(2), Error);

  commit(books, one_chunk(40, Precision::int4));
  EXPECT_EQ(books.version(), 3u);
  EXPECT_EQ(books.n_committed(), 40);
  EXPECT_EQ(books.tiles()[std::size_t(Precision::int4)].size(), 2u);
  EXPECT_THROW(books.check_commit(one_chunk(40, Precision::int8)), Error);
}

TEST(KvBookkeeping, TailHoldsTheRestOfMaxTokensOrDoubles) {
  const KvBookkeeping bounded({kShape, KvQuantLayout{}, 100});
  EXPECT_EQ(bounded.tail_capacity(32, 8), 68);
  const KvBookkeeping growing({kShape, KvQuantLayout{}, 0});
  EXPECT_EQ(growing.tail_capacity(32, 8), 256);
  EXPECT_EQ(growing.tail_capacity(32, 300), 600);
}

TEST(KvBookkeeping, CopiesKeepTheLayoutOnceCommitted) {
  KvBookkeeping books({kShape, KvQuantLayout{}, 0});
  KvQuantLayout wider;
  wider.group_size = 64;
  EXPECT_EQ(books.copy_with(wider).options().layout, wider);
  books.appended(0, 40);
  books.appended(1, 40);
  commit(books, one_chunk(40, Precision::int4));
  const KvBookkeeping copy = books.copy_with(KvQuantLayout{});
  EXPECT_EQ(copy.version(), books.version());
  EXPECT_EQ(copy.n_committed(), 40);
  EXPECT_EQ(copy.layer_tokens(1), 40);
  EXPECT_EQ(error_of<Error>([&] { (void)books.copy_with(wider); }),
            "KV store: a copy of a committed store must keep its quantization layout");
}

TEST(KvBookkeeping, CommitFaultsNameLayerHeadPositionAndChannel) {
  const KvBookkeeping books({kShape, KvQuantLayout{}, 0});
  EXPECT_EQ(error_of<Error>([&] { books.throw_commit_fault(true, 3, 17, 1, 5); }),
            "KV store: commit: a value of layer 1, KV head 1 at position 17, channel 5 is not "
            "finite; nothing was committed");
  EXPECT_EQ(error_of<Error>([&] { books.throw_commit_fault(false, 2, 4, 0, 9); }),
            "KV store: commit: a key, or its quantization group, of layer 1, KV head 0 at "
            "position 4, channel 9 is beyond the FP16 range; nothing was committed");
}

}  // namespace
}  // namespace cocktail::gpu
