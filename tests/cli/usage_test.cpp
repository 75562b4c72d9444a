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

TEST(CliUsage, MissingConfigFileIsNamed) {
  const ScratchDir scratch;
  const std::string config = scratch.path("missing.toml").string();
  expect_failure({"plan", "--config", config}, {config, "cannot read"});
}

TEST(CliUsage, UnknownConfigKeyIsNamedWithItsLine) {
  const ScratchDir scratch;
  const std::string config =
      scratch.write("typo.toml", "[planner.cocktail]\nalpha = 0.5\nalpah = 0.3\n");
  expect_failure({"plan", "--config", config}, {config + ":3:", "planner.cocktail.alpah"});
}

TEST(CliUsage, OutOfRangeSetValueIsNamed) {
  expect_failure({"plan", "--set", "planner.cocktail.alpha=1.5"},
                 {"--set planner.cocktail.alpha = 1.5", "out of range"});
}

TEST(CliUsage, MissingContextFileIsNamed) {
  const ScratchDir scratch;
  const std::string context = scratch.path("missing.txt").string();
  expect_failure({"plan", "--context-file", context}, {context});
}

TEST(CliUsage, MixMustSumToOne) {
  expect_failure({"bench", "attention", "--mix", "0.5,0.5,0.5"}, {"--mix", "sum to 1"});
}

TEST(CliUsage, UnknownSubcommandFails) {
  expect_failure({"frobnicate"}, {"frobnicate"});
  expect_failure({"bench", "frobnicate"}, {"frobnicate"});
}

}  // namespace
}  // namespace cocktail::testing
