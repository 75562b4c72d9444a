#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "run_cli.hpp"

// Every shipped config with every command that takes one: it works (`plan` with the attention
// scorer runs the model's prefill, as `run` does). The real-model runs are short (a few hundred
// context tokens, two answer tokens), so the whole loop costs seconds.
namespace cocktail::testing {
namespace {

namespace fs = std::filesystem;

const std::string kQuestion = "What is the code for the strongroom's inner door?";

const std::string kShortContext =
    "The strongroom has two doors. The code for the strongroom's inner door is 4471. The outer "
    "door has no code.";

// Configs whose planner needs a few hundred context tokens: the budget planner meets its bits
// only with enough INT2 chunks to average its FP16 ones against. The others get a few
// sentences, for a quick prefill (it dominates the loop's time, most of all under ASan).
const std::set<std::string> kNeedLongContext = {"default.toml"};

// The start of the built-in sample document, a few hundred tokens.
std::string long_context() {
  const std::string sample =
      read_file(fs::path(COCKTAIL_SOURCE_DIR) / "apps" / "cocktail" / "sample_context.txt");
  return sample.substr(0, sample.rfind('\n', 2000));
}

// A one-case eval suite on the short context, in `dir`: eval's methods set the planner.
std::string short_suite(const ScratchDir& dir) {
  dir.write(
      "cases.jsonl",
      nlohmann::json{
          {"id", "door"}, {"question", kQuestion}, {"expected", "4471"}, {"context", kShortContext}}
              .dump() +
          "\n");
  return dir.write("suite.toml", "kinds = []\ncases = \"cases.jsonl\"\n");
}

// Each command that takes --config, with the arguments that keep it short for `config`.
std::map<std::string, std::vector<std::string>> commands(const ScratchDir& dir,
                                                         const std::string& config) {
  const bool needs_long = kNeedLongContext.contains(config);
  const std::string file = dir.write("context.txt", needs_long ? long_context() : kShortContext);
  const std::string decode_tokens = needs_long ? "384" : "64";
  return {
      {"run", {"run", "--context-file", file, "--question", kQuestion, "--max-tokens", "2"}},
      {"plan", {"plan", "--context-file", file, "--query", kQuestion}},
      {"eval",
       {"eval", "--suite", short_suite(dir), "--methods", "fp16,cocktail", "--max-tokens", "2"}},
      {"bench attention",
       {"bench", "attention", "--context-tokens", "256", "--kv-heads", "1", "--head-dim", "64",
        "--repeat", "1"}},
      {"bench decode",
       {"bench", "decode", "--context-file", file, "--context-tokens", decode_tokens,
        "--gen-tokens", "2"}},
  };
}

std::vector<std::string> shipped_configs() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(fs::path(COCKTAIL_SOURCE_DIR) / "configs")) {
    if (entry.path().extension() == ".toml") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// "uniform-int4.toml" -> "uniform_int4", a test name.
std::string test_name(const ::testing::TestParamInfo<std::string>& config) {
  std::string name = fs::path(config.param).stem().string();
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

class ShippedConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedConfig, WorksWithEveryCommand) {
  const ScratchDir dir;
  for (auto [command, args] : commands(dir, GetParam())) {
    args.insert(args.end(), {"--config", shipped_config(GetParam())});
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << command << ":\n" << r.err;
    expect_no_sanitizer_report(r);
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, ShippedConfig, ::testing::ValuesIn(shipped_configs()), test_name);

}  // namespace
}  // namespace cocktail::testing
