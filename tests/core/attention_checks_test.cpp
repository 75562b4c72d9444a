// The decode-plan rule every AttentionExecutor applies (attention_checks.hpp).
#include "cocktail/attention_checks.hpp"

#include <gtest/gtest.h>

#include <string>

#include "cocktail/error.hpp"

namespace cocktail {
namespace {

std::string message_of(bool same_store, bool store_changed, std::int64_t held) {
  try {
    check_decode_plan_fits("decode", same_store, store_changed, 40, 3, held);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(AttentionChecks, ADecodePlanFitsOnlyTheUnchangedStoreItWasMadeFor) {
  EXPECT_EQ(message_of(true, false, 40), "");
  EXPECT_EQ(message_of(false, false, 40),
            "decode: the decode plan was made for 40 tokens of another store; layer 3 now holds "
            "40: plan the step again");
  EXPECT_EQ(message_of(true, true, 40),
            "decode: the decode plan was made for 40 tokens of this store; layer 3 now holds 40 "
            "and the store has changed since (an append or a commit): plan the step again");
  EXPECT_EQ(message_of(true, false, 41),
            "decode: the decode plan was made for 40 tokens of this store; layer 3 now holds 41: "
            "plan the step again");
}

}  // namespace
}  // namespace cocktail
