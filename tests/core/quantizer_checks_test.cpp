// The span rules every Quantizer applies before it packs or unpacks (quantizer_checks.hpp), in
// the words every backend's quantizer uses.
#include "cocktail/quantizer_checks.hpp"

#include <gtest/gtest.h>

#include "cocktail/error.hpp"
#include "support/error_of.hpp"

namespace cocktail {
namespace {

using testing::error_of;

const QuantSpec kInt4{Precision::int4, 32, QuantAxis::per_token, RangeFit::min_max};

TEST(QuantizerChecks, MessagesStartWithTheQuantizerTheCallAndTheSpec) {
  EXPECT_EQ(quantizer_call("CpuQuantizer", "pack", kInt4),
            "CpuQuantizer::pack (int4, per-token groups of 32): ");
  EXPECT_EQ(describe_block(48, 96), "a 48x96 block");
}

TEST(QuantizerChecks, SpansHoldTheBlocksValuesAndAtLeastItsPackedBytes) {
  const BlockShape shape{48, 96, CodeOrder::token_major};
  EXPECT_NO_THROW(check_quantizer_spans("GpuQuantizer", "pack", kInt4, shape, 48 * 96, 3000, 3000));
  EXPECT_NO_THROW(
      check_quantizer_spans("GpuQuantizer", "unpack", kInt4, shape, 48 * 96, 4000, 3000));
  EXPECT_EQ(error_of<Error>([&] {
              check_quantizer_spans("GpuQuantizer", "pack", kInt4, shape, 100, 3000, 3000);
            }),
            "GpuQuantizer::pack (int4, per-token groups of 32): 100 values for a 48x96 block, "
            "need 4608");
  EXPECT_EQ(error_of<Error>([&] {
              check_quantizer_spans("VulkanQuantizer", "unpack", kInt4, shape, 48 * 96, 2999, 3000);
            }),
            "VulkanQuantizer::unpack (int4, per-token groups of 32): 2999 bytes for a 48x96 "
            "block, need 3000");
}

}  // namespace
}  // namespace cocktail
