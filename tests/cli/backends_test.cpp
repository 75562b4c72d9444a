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
    for (const nlohmann::json& d : b.at("devices")) {
      EXPECT_TRUE(d.at("index").is_number_integer()) << d;
      EXPECT_TRUE(d.at("name").is_string()) << d;
      EXPECT_TRUE(d.at("memory_bytes").is_number_integer()) << d;
      EXPECT_TRUE(d.at("available").is_boolean()) << d;
      EXPECT_TRUE(d.at("reason").is_string()) << d;
    }
    // A backend can run where one of its devices can.
    if (b.at("name") == "cpu") {
      cpu_available = b.at("available") == true && b.at("devices").size() == 1 &&
                      b.at("devices")[0].at("available") == true;
    }
  }
  // The CPU backend is the reference every machine runs.
  EXPECT_TRUE(cpu_available) << backends.dump(2);
}

}  // namespace
}  // namespace cocktail::testing
