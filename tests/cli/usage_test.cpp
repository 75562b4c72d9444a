#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cocktail/version.hpp"
#include "run_cli.hpp"

namespace cocktail::testing {
namespace {

using ::testing::HasSubstr;

// The run fails and says why on stderr, naming each of `names`; stdout, which scripts parse,
// stays empty.
void expect_failure(const std::vector<std::string>& args, const std::vector<std::string>& names) {
  const CliResult result = run_cli(args);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err, "");
  for (const std::string& name : names) EXPECT_THAT(result.err, HasSubstr(name));
}

TEST(CliUsage, VersionPrintsTheLibraryVersion) {
  const CliResult result = run_cli({"--version"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, std::string(kVersion) + "\n");
}

TEST(CliUsage, UnknownSubcommandFails) {
  expect_failure({"frobnicate"}, {"frobnicate"});
  expect_failure({"bench", "frobnicate"}, {"frobnicate"});
}

}  // namespace
}  // namespace cocktail::testing
