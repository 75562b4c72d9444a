#include "cocktail/options.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "expect_config_error.hpp"

namespace cocktail {
namespace {

using testing::throws_config_error;

const std::string kFile = "configs/x.toml";

// [planner.cocktail] starting at line 10 of configs/x.toml.
Options planner_table() {
  return Options("planner.cocktail", SourceLocation{kFile, 10});
}

TEST(SourceLocationTest, NamesFileAndLine) {
  EXPECT_EQ((SourceLocation{"configs/x.toml", 12}.to_string()), "configs/x.toml:12");
  EXPECT_EQ((SourceLocation{"--set", 0}.to_string()), "--set");
}

TEST(OptionsTest, MissingKeysGiveTheFallback) {
  Options options = planner_table();
  EXPECT_TRUE(options.get_bool("flag", true));
  EXPECT_EQ(options.get_int("chunk_size", 32, 1, 1024), 32);
  EXPECT_DOUBLE_EQ(options.get_double("alpha", 0.6, 0.0, 1.0), 0.6);
  EXPECT_EQ(options.get_string("name", "x"), "x");
  EXPECT_EQ(options.get_choice("high", "fp16", {"fp16", "int8"}), "fp16");
  EXPECT_EQ(options.get_strings("paths", {"a"}), std::vector<std::string>{"a"});
  EXPECT_NO_THROW(options.finish());
}

TEST(OptionsTest, ReadsEveryType) {
  Options options = planner_table();
  options.set("flag", true, {kFile, 11});
  options.set("chunk_size", std::int64_t{64}, {kFile, 12});
  options.set("alpha", 0.25, {kFile, 13});
  options.set("name", std::string("abc"), {kFile, 14});
  options.set("paths", std::vector<std::string>{"a", "b"}, {kFile, 15});
  EXPECT_TRUE(options.contains("alpha"));
  EXPECT_FALSE(options.contains("beta"));
  EXPECT_EQ(options.name(), "planner.cocktail");
  EXPECT_TRUE(options.get_bool("flag", false));
  EXPECT_EQ(options.get_int("chunk_size", 32, 1, 1024), 64);
  EXPECT_DOUBLE_EQ(options.get_double("alpha", 0.6, 0.0, 1.0), 0.25);
  EXPECT_EQ(options.get_string("name", ""), "abc");
  EXPECT_EQ(options.get_strings("paths", {}), (std::vector<std::string>{"a", "b"}));
  EXPECT_NO_THROW(options.finish());
}

TEST(OptionsTest, IntegerIsAcceptedAsDouble) {
  Options options = planner_table();
  options.set("alpha", std::int64_t{1}, {kFile, 11});
  EXPECT_DOUBLE_EQ(options.get_double("alpha", 0.6, 0.0, 1.0), 1.0);
}

TEST(OptionsTest, DoubleIsNotAcceptedAsInteger) {
  Options options = planner_table();
  options.set("chunk_size", 32.0, {kFile, 11});
  EXPECT_TRUE(throws_config_error([&] { options.get_int("chunk_size", 32, 1, 1048576); },
                                  {"configs/x.toml:11: planner.cocktail.chunk_size = 32",
                                   "wrong type", "an integer from 1 to 1048576"}));
}

TEST(OptionsTest, DoubleOutOfRangeNamesFileLineKeyValueAndRange) {
  Options options = planner_table();
  options.set("alpha", 1.5, {kFile, 12});
  try {
    options.get_double("alpha", 0.6, 0.0, 1.0);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(
        e.what(),
        "configs/x.toml:12: planner.cocktail.alpha = 1.5 is out of range; allowed: 0 to 1");
  }
}

TEST(OptionsTest, NanIsOutOfRange) {
  Options options = planner_table();
  options.set("alpha", std::numeric_limits<double>::quiet_NaN(), {kFile, 12});
  EXPECT_TRUE(throws_config_error([&] { options.get_double("alpha", 0.6, 0.0, 1.0); },
                                  {"configs/x.toml:12", "planner.cocktail.alpha", "out of range"}));
}

TEST(OptionsTest, IntegerOutOfRange) {
  Options options = planner_table();
  options.set("chunk_size", std::int64_t{0}, {kFile, 13});
  EXPECT_TRUE(throws_config_error(
      [&] { options.get_int("chunk_size", 32, 1, 1048576); },
      {"configs/x.toml:13: planner.cocktail.chunk_size = 0 is out of range; allowed: 1 to "
       "1048576"}));
}

TEST(OptionsTest, WrongTypesNameWhatIsAllowed) {
  Options options = planner_table();
  options.set("flag", std::string("yes"), {kFile, 11});
  options.set("alpha", std::string("high"), {kFile, 12});
  options.set("name", std::int64_t{3}, {kFile, 13});
  options.set("paths", std::string("a"), {kFile, 14});
  EXPECT_TRUE(throws_config_error(
      [&] { options.get_bool("flag", false); },
      {"configs/x.toml:11", "planner.cocktail.flag = \"yes\"", "allowed: true or false"}));
  EXPECT_TRUE(throws_config_error(
      [&] { options.get_double("alpha", 0.6, 0.0, 1.0); },
      {"configs/x.toml:12", "planner.cocktail.alpha = \"high\"", "allowed: a number from 0 to 1"}));
  EXPECT_TRUE(
      throws_config_error([&] { options.get_string("name", ""); },
                          {"configs/x.toml:13", "planner.cocktail.name = 3", "allowed: a string"}));
  EXPECT_TRUE(throws_config_error(
      [&] { options.get_strings("paths", {}); },
      {"configs/x.toml:14", "planner.cocktail.paths = \"a\"", "allowed: an array of strings"}));
}

TEST(OptionsTest, BadChoiceListsTheChoices) {
  Options options = planner_table();
  options.set("high", std::string("fp8"), {kFile, 15});
  options.set("low", std::int64_t{2}, {kFile, 16});
  const std::vector<std::string> allowed = {"fp16", "int8", "nf4", "int4", "int2"};
  EXPECT_TRUE(throws_config_error(
      [&] { options.get_choice("high", "fp16", allowed); },
      {"configs/x.toml:15: planner.cocktail.high = \"fp8\" is not allowed; allowed: fp16, int8, "
       "nf4, int4, int2"}));
  EXPECT_TRUE(throws_config_error([&] { options.get_choice("low", "int2", allowed); },
                                  {"configs/x.toml:16", "planner.cocktail.low = 2", "fp16"}));
}

TEST(OptionsTest, FinishNamesTheUnknownKeyAndTheKnownOnes) {
  Options options = planner_table();
  options.set("alpah", 0.5, {kFile, 11});
  options.get_double("alpha", 0.6, 0.0, 1.0);
  options.get_double("beta", 0.1, 0.0, 1.0);
  try {
    options.finish();
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "configs/x.toml:11: unknown key planner.cocktail.alpah in [planner.cocktail]; "
                 "known keys: alpha, beta");
  }
}

TEST(OptionsTest, FinishReportsTheFirstUnknownKeyOfTheFile) {
  Options options = planner_table();
  options.set("zeta", 0.5, {"--set", 0});
  options.set("omega", 0.5, {kFile, 14});
  options.set("delta", 0.5, {kFile, 12});
  EXPECT_TRUE(
      throws_config_error([&] { options.finish(); },
                          {"configs/x.toml:12", "planner.cocktail.delta", "known keys: none"}));
}

TEST(OptionsTest, ContainsDoesNotCountAsReading) {
  Options options = planner_table();
  options.set("alpha", 0.5, {kFile, 11});
  EXPECT_TRUE(options.contains("alpha"));
  EXPECT_THROW(options.finish(), ConfigError);
}

TEST(OptionsTest, OverrideNamesItselfAsTyped) {
  Options options = planner_table();
  options.set("alpha", 0.5, {kFile, 11});
  options.set("alpha", 1.5, {"--set", 0});
  EXPECT_TRUE(
      throws_config_error([&] { options.get_double("alpha", 0.6, 0.0, 1.0); },
                          {"--set planner.cocktail.alpha = 1.5 is out of range; allowed: 0 to 1"}));
  options.set("alpah", 0.5, {"--set", 0});
  EXPECT_TRUE(throws_config_error(
      [&] { options.finish(); },
      {"--set planner.cocktail.alpah: unknown key in [planner.cocktail]; known keys: alpha"}));
}

TEST(OptionsTest, FailLocatesAtTheKeyOrElseAtTheTable) {
  Options options = planner_table();
  options.set("beta", 0.5, {kFile, 12});
  EXPECT_TRUE(
      throws_config_error([&] { options.fail("beta", "makes alpha + beta > 1"); },
                          {"configs/x.toml:12: planner.cocktail.beta makes alpha + beta > 1"}));
  EXPECT_TRUE(throws_config_error([&] { options.fail("alpha", "is too large"); },
                                  {"configs/x.toml:10: planner.cocktail.alpha is too large"}));
}

}  // namespace
}  // namespace cocktail
