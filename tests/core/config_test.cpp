#include "cocktail/config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "expect_config_error.hpp"

namespace cocktail {
namespace {

namespace fs = std::filesystem;
using testing::throws_config_error;

const std::string kFile = "configs/x.toml";

Config parse(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return parse_config(text, kFile, overrides);
}

TEST(ConfigTest, EmptyConfigGivesDefaults) {
  const Config config = parse("");
  EXPECT_EQ(config.engine.backend, "auto");
  EXPECT_EQ(config.engine.planner, "budget");
  EXPECT_EQ(config.engine.scorer, "attention");
  EXPECT_EQ(config.engine.log_level, "info");
  EXPECT_TRUE(config.engine.plugin_paths.empty());
  EXPECT_EQ(config.engine.layout, (KvQuantLayout{32, QuantAxis::per_channel, QuantAxis::per_token,
                                                 RangeFit::least_squares}));
  EXPECT_TRUE(config.plugins.empty());
}

TEST(ConfigTest, ReadsEngineAndQuant) {
  const Config config = parse(R"(
[engine]
backend = "cpu"
planner = "uniform"
scorer = "minilm"
log_level = "debug"

[quant]
group_size = 64
key_axis = "token"
value_axis = "channel"
range = "least_squares"
)");
  EXPECT_EQ(config.engine.backend, "cpu");
  EXPECT_EQ(config.engine.planner, "uniform");
  EXPECT_EQ(config.engine.scorer, "minilm");
  EXPECT_EQ(config.engine.log_level, "debug");
  EXPECT_EQ(config.engine.layout, (KvQuantLayout{64, QuantAxis::per_token, QuantAxis::per_channel,
                                                 RangeFit::least_squares}));
  EXPECT_EQ(parse("[quant]\n").engine.layout.range, RangeFit::least_squares);
  EXPECT_EQ(parse("[quant]\nrange = \"min_max\"\n").engine.layout.range, RangeFit::min_max);
}

TEST(ConfigTest, PluginTablesKeepTheirKeysForThePlugin) {
  const Config config = parse(R"([planner.cocktail]
alpha = 0.5
high = "int8"
[scorer.bm25]
k1 = 2
[backend.cpu]
threads = 4
)");
  Options planner = config.plugin_options("planner", "cocktail");
  EXPECT_EQ(planner.name(), "planner.cocktail");
  EXPECT_DOUBLE_EQ(planner.get_double("alpha", 0.6, 0.0, 1.0), 0.5);
  EXPECT_EQ(planner.get_string("high", "fp16"), "int8");
  EXPECT_NO_THROW(planner.finish());
  // An integer is accepted where a float is asked for.
  EXPECT_DOUBLE_EQ(config.plugin_options("scorer", "bm25").get_double("k1", 1.2, 0, 10), 2.0);
  EXPECT_EQ(config.plugin_options("backend", "cpu").get_int("threads", 0, 0, 1024), 4);
}

TEST(ConfigTest, AbsentPluginTableIsEmpty) {
  Options options = parse("").plugin_options("planner", "recency");
  EXPECT_EQ(options.name(), "planner.recency");
  EXPECT_EQ(options.get_int("chunk_size", 32, 1, 1048576), 32);
  EXPECT_NO_THROW(options.finish());
}

TEST(ConfigTest, PluginValueOutOfRangeNamesFileLineAndKey) {
  Options options =
      parse("[planner.cocktail]\nbeta = 0.1\nalpha = 1.5\n").plugin_options("planner", "cocktail");
  EXPECT_TRUE(throws_config_error(
      [&] { options.get_double("alpha", 0.6, 0.0, 1.0); },
      {"configs/x.toml:3: planner.cocktail.alpha = 1.5 is out of range; allowed: 0 to 1"}));
}

TEST(ConfigTest, UnknownEngineKey) {
  EXPECT_TRUE(throws_config_error([] { parse("[engine]\nbackend = \"cpu\"\nbackned = 1\n"); },
                                  {"configs/x.toml:3: unknown key engine.backned in [engine]",
                                   "known keys: backend, device, log_level, planner, "
                                   "plugin_paths, scorer"}));
}

TEST(ConfigTest, UnknownQuantKey) {
  EXPECT_TRUE(throws_config_error([] { parse("[quant]\ngroup = 32\n"); },
                                  {"configs/x.toml:2", "quant.group", "group_size"}));
}

TEST(ConfigTest, WrongType) {
  EXPECT_TRUE(throws_config_error([] { parse("[engine]\n\nbackend = 3\n"); },
                                  {"configs/x.toml:3", "engine.backend = 3", "a string"}));
  EXPECT_TRUE(throws_config_error([] { parse("[engine]\nplugin_paths = \"a\"\n"); },
                                  {"configs/x.toml:2", "engine.plugin_paths", "array of strings"}));
  EXPECT_TRUE(throws_config_error([] { parse("[quant]\ngroup_size = 32.0\n"); },
                                  {"configs/x.toml:2", "quant.group_size", "an integer"}));
}

TEST(ConfigTest, EmptyPluginName) {
  EXPECT_TRUE(throws_config_error([] { parse("[engine]\nplanner = \"\"\n"); },
                                  {"configs/x.toml:2", "engine.planner", "allowed"}));
}

TEST(ConfigTest, GroupSizeOutOfRangeOrNotMultipleOf32) {
  EXPECT_TRUE(throws_config_error(
      [] { parse("[quant]\ngroup_size = 2048\n"); },
      {"configs/x.toml:2: quant.group_size = 2048 is out of range; allowed: 32 to 1024"}));
  EXPECT_TRUE(throws_config_error([] { parse("[quant]\ngroup_size = 48\n"); },
                                  {"configs/x.toml:2", "quant.group_size = 48", "multiple of 32"}));
}

TEST(ConfigTest, BadChoice) {
  EXPECT_TRUE(throws_config_error([] { parse("[engine]\nlog_level = \"verbose\"\n"); },
                                  {"configs/x.toml:2", "engine.log_level = \"verbose\"",
                                   "trace, debug, info, warn, error, off"}));
  EXPECT_TRUE(throws_config_error([] { parse("[quant]\nkey_axis = \"row\"\n"); },
                                  {"configs/x.toml:2", "quant.key_axis", "channel, token"}));
  EXPECT_TRUE(throws_config_error([] { parse("[quant]\nrange = \"mse\"\n"); },
                                  {"configs/x.toml:2", "quant.range", "min_max, least_squares"}));
}

TEST(ConfigTest, UnknownTable) {
  EXPECT_TRUE(throws_config_error([] { parse("[engine]\n\n[models]\npath = \"x\"\n"); },
                                  {"configs/x.toml:3", "[models]", "unknown table",
                                   "[engine], [quant], [model], [planner.<name>]"}));
}

TEST(ConfigTest, TopLevelKey) {
  EXPECT_TRUE(
      throws_config_error([] { parse("backend = \"cpu\"\n[engine]\n"); },
                          {"configs/x.toml:1", "backend", "top-level key", "[engine], [quant]"}));
}

TEST(ConfigTest, KeyDirectlyInAPluginKind) {
  EXPECT_TRUE(throws_config_error([] { parse("[planner]\nalpha = 0.5\n"); },
                                  {"configs/x.toml:2", "planner.alpha", "[planner.<name>]"}));
}

TEST(ConfigTest, UnsupportedValueTypes) {
  EXPECT_TRUE(throws_config_error([] { parse("[planner.cocktail]\nwhen = 1979-05-27\n"); },
                                  {"configs/x.toml:2", "planner.cocktail.when", "date"}));
  EXPECT_TRUE(throws_config_error([] { parse("[planner.cocktail.extra]\nx = 1\n"); },
                                  {"configs/x.toml:1", "planner.cocktail.extra", "table"}));
  EXPECT_TRUE(throws_config_error([] { parse("[engine]\nplugin_paths = ['a', 1]\n"); },
                                  {"configs/x.toml:2", "engine.plugin_paths", "integer"}));
}

TEST(ConfigTest, SyntaxErrorNamesItsLine) {
  EXPECT_TRUE(throws_config_error([] { parse("[engine]\nbackend = \"cpu\"\nplanner = \n"); },
                                  {"configs/x.toml:3:", "syntax error"}));
}

// Found by fuzz/config_fuzzer: toml++ 3.3 reaches an unreachable branch (undefined behaviour)
// when it asks whether U+00A9 and its neighbours are whitespace. Such a character where
// whitespace may stand is refused before toml++ sees it, naming line and column.
TEST(ConfigTest, NonAsciiOutsideStringsAndCommentsIsRefused) {
  EXPECT_TRUE(throws_config_error([] { parse("[model]\na = 1 \u00a9\n"); },
                                  {"configs/x.toml:2:7: syntax error: a non-ASCII character "
                                   "outside a string or comment"}));
  EXPECT_TRUE(throws_config_error([] { parse("[model]\n\xcc\xaa = 1\n"); },
                                  {"configs/x.toml:2:1:", "non-ASCII"}));
  EXPECT_TRUE(throws_config_error([] { parse("[model]\na = \"\"\"x\\\u00a7\"\"\"\n"); },
                                  {"configs/x.toml:2:10:", "after a backslash"}));
  EXPECT_TRUE(throws_config_error([] { parse("[model]\na = \"\"\"x\\  \u00a7\"\"\"\n"); },
                                  {"configs/x.toml:2:12:", "after a backslash and spaces"}));
  // A quote glued to a bare value does not open a string for toml++, which reads on.
  EXPECT_TRUE(
      throws_config_error([] { parse("[model]\nc = 1979-05-27T07:32:00Z'''\u00a9\n'''\n"); },
                          {"configs/x.toml:2:28:", "non-ASCII character outside a string"}));
  // So does a quote after a dot in a value (a time's fraction), where no key may stand.
  EXPECT_TRUE(
      throws_config_error([] { parse("[model]\nc = 07:32.'''\u00a9'''\n"); },
                          {"configs/x.toml:2:14:", "non-ASCII character outside a string"}));
  // Nor does a quote after '=' or '[' inside a bare value (fuzz finding, from a --set value).
  EXPECT_TRUE(
      throws_config_error([] { parse("[model]\nd = 1=\"\"==\"caf\u00e9\"\n"); },
                          {"configs/x.toml:2:15:", "non-ASCII character outside a string"}));
  EXPECT_TRUE(throws_config_error([] { parse("[model]\nd = 1[\"\u00e9\"]\n"); },
                                  {"configs/x.toml:2:8:", "non-ASCII character outside a string"}));
  EXPECT_EQ(parse("", {"model.d=[1, 2]#\nd = 1=\"\"==\"caf\u00e9\""}).model.get_string("d", ""),
            "[1, 2]#\nd = 1=\"\"==\"caf\u00e9\"");
  // A --set value that would trip it is taken as a plain string, like any other non-TOML.
  EXPECT_EQ(parse("", {"model.a=1 \u00a9"}).model.get_string("a", ""), "1 \u00a9");
}

// Non-ASCII text stays valid where TOML allows it: in strings of every kind, in comments, and
// after a line-ending backslash in a multi-line string (which toml++ 3.3 cannot read as it is).
TEST(ConfigTest, NonAsciiInStringsAndCommentsIsRead) {
  Config config = parse(
      "\xEF\xBB\xBF# caf\u00e9 \u00a9\n[model] # \u00a7\n"
      "a = \"caf\u00e9 \\\" \u00a9\"\nb = 'caf\u00e9 \u00a9'\n"
      "c = '''\u00a9\n\u00a7'''''\n"
      "d = \"\"\"x\\\n   \u00a7 \\\n\n  \U0001F600\"\"\"\"\"\n"
      "\"k\u00e9y\" = \"\"\"\u00a9\"\"\"\n");
  Options& model = config.model;
  EXPECT_EQ(model.get_string("a", ""), "caf\u00e9 \" \u00a9");
  EXPECT_EQ(model.get_string("b", ""), "caf\u00e9 \u00a9");
  EXPECT_EQ(model.get_string("c", ""), "\u00a9\n\u00a7''");
  EXPECT_EQ(model.get_string("d", ""), "x\u00a7 \U0001F600\"\"");
  EXPECT_EQ(model.get_string("k\u00e9y", ""), "\u00a9");
  // Quoted key parts after a dot: in a dotted key, a table header and an inline table.
  config = parse("planner.\"caf\u00e9\".a = 1\n[scorer.'\u00e9']\nb = 2\n");
  EXPECT_EQ(config.plugin_options("planner", "caf\u00e9").get_int("a", 0, 0, 9), 1);
  EXPECT_EQ(config.plugin_options("scorer", "\u00e9").get_int("b", 0, 0, 9), 2);
  // An inline table is no setting, but toml++ reads it: the error is not a syntax error.
  EXPECT_TRUE(throws_config_error(
      [] { parse("[backend.x]\nc = { d.\"\u00e9\" = 3, e = [1.5, { f.'\u00a9' = 4 }] }\n"); },
      {"configs/x.toml:2: backend.x.c is a table"}));
}

TEST(ConfigTest, PluginPathsAreRelativeToTheConfigFolder) {
  const Config config = parse("[engine]\nplugin_paths = ['plugins', '../lib', '/opt/p']\n");
  EXPECT_EQ(config.engine.plugin_paths,
            (std::vector<fs::path>{"configs/plugins", "lib", "/opt/p"}));
}

TEST(ConfigTest, OverridesApplyOnTopOfTheFile) {
  const Config config = parse(
      "[engine]\nbackend = \"cuda\"\n[planner.cocktail]\nalpha = 0.3\n",
      {"engine.backend=cpu", "planner.cocktail.alpha = 0.5", "planner.uniform.precision='int2'",
       "quant.group_size=64", "engine.plugin_paths=['a','b']"});
  EXPECT_EQ(config.engine.backend, "cpu");
  EXPECT_EQ(config.engine.layout.group_size, 64);
  // Paths typed on the command line are relative to the working folder.
  EXPECT_EQ(config.engine.plugin_paths, (std::vector<fs::path>{"a", "b"}));
  EXPECT_DOUBLE_EQ(config.plugin_options("planner", "cocktail").get_double("alpha", 0.6, 0, 1),
                   0.5);
  EXPECT_EQ(config.plugin_options("planner", "uniform").get_string("precision", "int4"), "int2");
}

TEST(OverrideTest, ValuesAreValidatedToo) {
  EXPECT_TRUE(throws_config_error([] { parse("", {"quant.group_size=48"}); },
                                  {"--set quant.group_size = 48 is not a multiple of 32"}));
  EXPECT_TRUE(throws_config_error([] { parse("", {"engine.log_level=loud"}); },
                                  {"--set engine.log_level = \"loud\"", "trace"}));
  EXPECT_TRUE(throws_config_error([] { parse("", {"engine.colour=red"}); },
                                  {"--set engine.colour: unknown key in [engine]"}));
  Options options = parse("", {"planner.cocktail.alpha=1.5"}).plugin_options("planner", "cocktail");
  EXPECT_TRUE(throws_config_error([&] { options.get_double("alpha", 0.6, 0.0, 1.0); },
                                  {"--set planner.cocktail.alpha = 1.5 is out of range"}));
}

TEST(OverrideTest, MalformedOverrides) {
  EXPECT_TRUE(throws_config_error([] { parse("", {"engine.backend"}); },
                                  {"--set engine.backend", "section.key=value"}));
  EXPECT_TRUE(
      throws_config_error([] { parse("", {"backend=cpu"}); }, {"--set backend", "top-level key"}));
  EXPECT_TRUE(throws_config_error([] { parse("", {"models.path=x"}); },
                                  {"--set [models]", "unknown table"}));
  EXPECT_TRUE(throws_config_error([] { parse("", {"planner.cocktail.x.y=1"}); },
                                  {"--set [planner.cocktail.x]", "unknown table"}));
  EXPECT_TRUE(throws_config_error([] { parse("", {"planner.alpha=1"}); },
                                  {"--set [planner]", "[planner.<name>]"}));
}

// Each test gets its own folder for config files.
class LoadConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cocktail_config_test_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }

  fs::path dir_;
};

TEST_F(LoadConfigTest, ReadsTheFileAndResolvesPathsBesideIt) {
  const fs::path file = write("c.toml", "[engine]\nbackend = \"cpu\"\nplugin_paths = ['p']\n");
  const Config config = load_config(file);
  EXPECT_EQ(config.engine.backend, "cpu");
  EXPECT_EQ(config.engine.plugin_paths, std::vector<fs::path>{dir_ / "p"});
}

TEST_F(LoadConfigTest, ErrorsNameTheFile) {
  const fs::path file = write("bad.toml", "[engine]\nbackend = 1\n");
  EXPECT_TRUE(
      throws_config_error([&] { load_config(file); }, {file.string() + ":2", "engine.backend"}));
}

TEST_F(LoadConfigTest, MissingFileNamesThePath) {
  const fs::path file = dir_ / "missing.toml";
  EXPECT_TRUE(throws_config_error([&] { load_config(file); }, {file.string(), "cannot read"}));
  EXPECT_TRUE(throws_config_error([&] { load_config(dir_); }, {dir_.string(), "cannot read"}));
}

// The shipped configs parse, and default.toml spells out exactly the defaults.
TEST(ShippedConfigsTest, AllParse) {
  const fs::path folder = fs::path(COCKTAIL_SOURCE_DIR) / "configs";
  for (const char* name : {"default.toml", "fp16.toml", "uniform-int4.toml", "uniform-int2.toml",
                           "kivi-int2.toml", "recency.toml", "paper.toml"}) {
    EXPECT_NO_THROW(load_config(folder / name)) << name;
  }
}

TEST(ShippedConfigsTest, DefaultMatchesTheBuiltInDefaults) {
  const Config config = load_config(fs::path(COCKTAIL_SOURCE_DIR) / "configs" / "default.toml");
  EXPECT_EQ(config.engine.backend, "auto");
  EXPECT_EQ(config.engine.planner, "budget");
  EXPECT_EQ(config.engine.scorer, "attention");
  EXPECT_EQ(config.engine.log_level, "info");
  EXPECT_TRUE(config.engine.plugin_paths.empty());
  EXPECT_EQ(config.engine.layout, parse("").engine.layout);
  Options budget = config.plugin_options("planner", "budget");
  EXPECT_DOUBLE_EQ(budget.get_double("target_bits", -1, 0, 16), 3.0);
  EXPECT_EQ(budget.get_int("max_kv_bytes", -1, 0, std::int64_t{1} << 50), 0);
  EXPECT_EQ(budget.get_int("chunk_size", -1, 1, 1048576), 32);
  EXPECT_EQ(budget.get_int("min_high_chunks", -1, 0, 1 << 30), 0);
  EXPECT_EQ(budget.get_string("high", ""), "fp16");
  EXPECT_EQ(budget.get_string("mid", ""), "int4");
  EXPECT_EQ(budget.get_string("low", ""), "int2");
  EXPECT_NO_THROW(budget.finish());
  Options attention = config.plugin_options("scorer", "attention");
  EXPECT_EQ(attention.get_int("first_layer", 99, -4096, 4095), 0);
  EXPECT_EQ(attention.get_int("last_layer", 99, -4096, 4095), -1);
  EXPECT_EQ(attention.get_int("layer_step", 99, 1, 4096), 1);
  EXPECT_EQ(attention.get_string("aggregate", ""), "max");
  EXPECT_EQ(attention.get_int("sink_tokens", 99, 0, std::int64_t{1} << 40), 4);
  EXPECT_NO_THROW(attention.finish());
  Options cocktail = config.plugin_options("planner", "cocktail");
  EXPECT_DOUBLE_EQ(cocktail.get_double("alpha", -1, 0, 1), 0.6);
  EXPECT_DOUBLE_EQ(cocktail.get_double("beta", -1, 0, 1), 0.1);
  EXPECT_EQ(cocktail.get_int("chunk_size", -1, 1, 1048576), 32);
  EXPECT_EQ(cocktail.get_string("high", ""), "fp16");
  EXPECT_EQ(cocktail.get_string("mid", ""), "int4");
  EXPECT_EQ(cocktail.get_string("low", ""), "int2");
  EXPECT_NO_THROW(cocktail.finish());
  Options bm25 = config.plugin_options("scorer", "bm25");
  EXPECT_DOUBLE_EQ(bm25.get_double("k1", -1, 0, 10), 1.2);
  EXPECT_DOUBLE_EQ(bm25.get_double("b", -1, 0, 1), 0.75);
  EXPECT_NO_THROW(bm25.finish());
  Options uniform = config.plugin_options("planner", "uniform");
  EXPECT_EQ(uniform.get_string("precision", ""), "int4");
  EXPECT_EQ(uniform.get_int("chunk_size", -1, 1, 1048576), 32);
  EXPECT_NO_THROW(uniform.finish());
  Options recency = config.plugin_options("planner", "recency");
  EXPECT_EQ(recency.get_int("chunk_size", -1, 1, 1048576), 32);
  EXPECT_EQ(recency.get_int("sink_tokens", -1, 0, 1 << 30), 4);
  EXPECT_EQ(recency.get_int("recent_tokens", -1, 0, 1 << 30), 256);
  EXPECT_EQ(recency.get_int("int8_tokens", -1, 0, 1 << 30), 1024);
  EXPECT_NO_THROW(recency.finish());
  Options cpu = config.plugin_options("backend", "cpu");
  EXPECT_EQ(cpu.get_int("threads", -1, 0, 1024), 0);
  EXPECT_EQ(cpu.get_string("simd", ""), "auto");
  EXPECT_EQ(cpu.get_string("matmul_activations", ""), "int16");
  EXPECT_TRUE(cpu.get_bool("row_group_weights", false));
  EXPECT_NO_THROW(cpu.finish());
  Options model = config.model;
  EXPECT_EQ(model.get_string("path", ""), "SmolLM2-135M-Instruct.Q4_1.gguf");
  EXPECT_EQ(model.get_int("prefill_block", -1, 1, 8192), 256);
  EXPECT_DOUBLE_EQ(model.get_double("temperature", -1, 0, 100), 0.0);
  EXPECT_DOUBLE_EQ(model.get_double("top_p", -1, 0, 1), 1.0);
  EXPECT_EQ(model.get_int("seed", -1, 0, INT64_MAX), 1234);
  EXPECT_NO_THROW(model.finish());
}

}  // namespace
}  // namespace cocktail
