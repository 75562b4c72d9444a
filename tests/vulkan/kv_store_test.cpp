// The Vulkan KV store and quantizer beyond the conformance suite: what a commit or a pack
// reports of values FP16 cannot hold (and that a failed commit leaves the store as it was), and
// a tail larger than one storage binding refused before any memory is made.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "cocktail/plan.hpp"
#include "support/random_kv.hpp"
#include "vulkan_fixture.hpp"

namespace cocktail::vulkan::testing {
namespace {

using cocktail::testing::random_floats;

constexpr KvShape kShape{2, 2, 64};
constexpr std::int64_t kTokens = 64;

class VulkanKvStoreTest : public VulkanTest {
 protected:
  // A store of kTokens random tokens in every layer, with `bad` written at (layer, position,
  // kv_head, channel) of the keys or the values.
  std::shared_ptr<KvStore> store_with(float bad, int layer, std::int64_t position, int kv_head,
                                      int channel, bool key) {
    std::mt19937 rng(3);
    auto store = backend().make_kv_store({kShape, KvQuantLayout{}, 0});
    const auto width = std::int64_t(kShape.token_floats());
    for (int l = 0; l < kShape.n_layers; ++l) {
      std::vector<float> k = random_floats(std::size_t(kTokens * width), rng);
      std::vector<float> v = random_floats(std::size_t(kTokens * width), rng);
      if (l == layer) {
        (key ? k : v)[std::size_t(position * width + kv_head * kShape.head_dim + channel)] = bad;
      }
      const DeviceRows kd = to_device(k, kTokens, width);
      const DeviceRows vd = to_device(v, kTokens, width);
      store->append(stream(), l, kd.tensor, vd.tensor);
      stream().synchronize();
    }
    return store;
  }

  // Commits `plan` and expects an Error whose message contains `expected`, with the store still
  // uncommitted and its tail unchanged.
  void expect_refused(KvStore& store, const Plan& plan, const std::string& expected) {
    const KvHeadSnapshot before = store.snapshot(1, 1);
    try {
      store.commit(stream(), plan);
      ADD_FAILURE() << "the commit was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
    EXPECT_EQ(store.n_committed(), 0);
    EXPECT_TRUE(store.plan().chunks.empty());
    const KvHeadSnapshot after = store.snapshot(1, 1);
    EXPECT_EQ(after.positions, before.positions);
    EXPECT_EQ(after.keys, before.keys);
    EXPECT_EQ(after.values, before.values);
  }
};

TEST_F(VulkanKvStoreTest, CommitNamesANonFiniteValueAndCommitsNothing) {
  const auto store = store_with(std::numeric_limits<float>::quiet_NaN(), 1, 37, 0, 5, true);
  expect_refused(*store, fixed_size_chunks(kTokens, 32, Precision::int4),
                 "a key of layer 1, KV head 0 at position 37, channel 5 is not finite; nothing "
                 "was committed");
}

// A value too large for FP16 is infinite in the tail already, so the commit finds it not finite.
TEST_F(VulkanKvStoreTest, CommitNamesAValueTooLargeForTheTail) {
  const auto store = store_with(1e6f, 0, 40, 1, 60, false);
  expect_refused(*store, fixed_size_chunks(kTokens, 32, Precision::int8),
                 "a value of layer 0, KV head 1 at position 40, channel 60 is not finite");
}

TEST_F(VulkanKvStoreTest, RefusesATailLargerThanOneBinding) {
  const std::int64_t rows =
      std::int64_t(device().limits().max_storage_range) / (kShape.n_kv_heads * kShape.head_dim * 2);
  auto store = backend().make_kv_store({kShape, KvQuantLayout{}, rows + 1});
  std::mt19937 rng(4);
  const std::vector<float> k = random_floats(kShape.token_floats(), rng);
  const DeviceRows kd = to_device(k, 1, std::int64_t(kShape.token_floats()));
  try {
    store->append(stream(), 0, kd.tensor, kd.tensor);
    ADD_FAILURE() << "the append was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("KV store: append: the FP16 tail of a layer for"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(store->n_tokens(), 0);
}

TEST_F(VulkanKvStoreTest, PackNamesTheLowestNonFiniteValue) {
  const auto quantizer = backend().make_quantizer({Precision::int2, 32, QuantAxis::per_token});
  const BlockShape shape{32, 64, CodeOrder::token_major};
  std::mt19937 rng(5);
  std::vector<float> values = random_floats(32 * 64, rng);
  values[9 * 64 + 40] = std::numeric_limits<float>::infinity();
  values[2 * 64 + 3] = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::byte> packed(quantizer->packed_bytes(shape));
  try {
    quantizer->pack(values, shape, packed);
    ADD_FAILURE() << "the pack was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite value at token 2, channel 3 of a 32x64 block"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(VulkanKvStoreTest, PackNamesAnFp16ValueBeyondItsRange) {
  const auto quantizer = backend().make_quantizer({Precision::fp16, 32, QuantAxis::per_token});
  const BlockShape shape{32, 64, CodeOrder::token_major};
  std::mt19937 rng(6);
  std::vector<float> values = random_floats(32 * 64, rng);
  values[31 * 64 + 63] = -1e6f;
  std::vector<std::byte> packed(quantizer->packed_bytes(shape));
  try {
    quantizer->pack(values, shape, packed);
    ADD_FAILURE() << "the pack was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "the value at token 31, channel 63 of a 32x64 block is beyond the FP16 range"),
              std::string::npos)
        << e.what();
  }
}

// Without push descriptors the store's kernels bind through descriptor pools.
class VulkanKvStorePoolTest : public VulkanKvStoreTest {
 protected:
  void SetUp() override { SetUpWith(false); }
};

TEST_F(VulkanKvStorePoolTest, CommitsAndSnapshotsThroughDescriptorPools) {
  const auto store = store_with(0.5f, 0, 0, 0, 0, true);
  const KvHeadSnapshot appended = store->snapshot(0, 1);
  store->commit(stream(), fixed_size_chunks(kTokens, 32, Precision::int8));
  EXPECT_EQ(store->n_committed(), kTokens);
  const KvHeadSnapshot committed = store->clone(store->options().layout)->snapshot(0, 1);
  ASSERT_EQ(committed.positions, appended.positions);
  ASSERT_EQ(committed.keys.size(), appended.keys.size());
  for (std::size_t i = 0; i < committed.keys.size(); ++i) {
    // Normal values: a group spans well under 16, so INT8 is within half of span/255.
    ASSERT_NEAR(committed.keys[i], appended.keys[i], 8.0 / 255) << i;
    ASSERT_NEAR(committed.values[i], appended.values[i], 8.0 / 255) << i;
  }
}

}  // namespace
}  // namespace cocktail::vulkan::testing
