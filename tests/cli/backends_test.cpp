#include <gtest/gtest.h>

#include "run_cli.hpp"

namespace cocktail::testing {
namespace {

TEST(CliBackends, JsonListsEveryBackendAndAnAvailableCpu) {
  const nlohmann::json backends = json_of(run_cli({"backends", "--json"}));
  ASSERT_TRUE(backends.is_array());
  bool cpu_available = false;
  // at() throws on a missing key, which fails the test naming that key.
  for (const nlohmann::json& b : backends) {
    ASSERT_TRUE(b.is_object()) << b;
    EXPECT_TRUE(b.at("name").is_string()) << b;
    EXPECT_TRUE(b.at("available").is_boolean()) << b;
    EXPECT_TRUE(b.at("score").is_number_integer()) << b;
    EXPECT_TRUE(b.at("reason").is_string()) << b;
    EXPECT_TRUE(b.at("devices").is_array()) << b;
    cpu_available |= b.at("name") == "cpu" && b.at("available") == true;
  }
  // The CPU backend is the reference every machine runs.
  EXPECT_TRUE(cpu_available) << backends.dump(2);
}

}  // namespace
}  // namespace cocktail::testing
