#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "run_cli.hpp"

// Every shipped config with every command that takes one: it works, or it is refused with an
// error that says why. The real-model runs are short (a few hundred context tokens, two answer
// tokens), so the whole loop costs seconds.
namespace cocktail::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kQuestion = "What is the code for the strongroom's inner door?";

// The start of the built-in sample document, a few hundred tokens: long enough for the budget
// planner of budget-3bit.toml to meet 3 bits (its FP16 chunks need INT2 ones to average
// against), short enough for a quick prefill.
std::string short_context() {
  const std::string sample =
      read_file(fs::path(COCKTAIL_SOURCE_DIR) / "apps" / "cocktail" / "sample_context.txt");
  return sample.substr(0, sample.rfind('\n', 2000));
}

// A one-case eval suite of a few sentences, in `dir`: eval's methods set the planner, so none
// needs the longer context.
std::string short_suite(const ScratchDir& dir) {
  const std::string context =
      "The strongroom has two doors. The code for the strongroom's inner door is 4471. The "
      "outer door has no code.";
  dir.write("cases.jsonl",
            nlohmann::json{
                {"id", "door"}, {"question", kQuestion}, {"expected", "4471"}, {"context", context}}
                    .dump() +
                "\n");
  return dir.write("suite.toml", "kinds = []\ncases = \"cases.jsonl\"\n");
}

// Each command that takes --config, with the arguments that keep it short.
std::map<std::string, std::vector<std::string>> commands(const ScratchDir& dir) {
  const std::string file = dir.write("context.txt", short_context());
  return {
      {"run", {"run", "--context-file", file, "--question", kQuestion, "--max-tokens", "2"}},
      {"plan", {"plan", "--context-file", file, "--query", kQuestion}},
      {"eval",
       {"eval", "--suite", short_suite(dir), "--methods", "fp16,cocktail", "--max-tokens", "2"}},
      {"bench attention",
       {"bench", "attention", "--context-tokens", "256", "--kv-heads", "1", "--head-dim", "64",
        "--repeat", "1"}},
      {"bench decode",
       {"bench", "decode", "--context-file", file, "--context-tokens", "384", "--gen-tokens", "2"}},
  };
}

// The pairs that cannot work, and the reason their error must give.
const std::map<std::pair<std::string, std::string>, std::string>& refusals() {
  static const std::map<std::pair<std::string, std::string>, std::string> known = {
      {{"budget-3bit.toml", "plan"}, "the attention scorer needs a model's prefill"},
  };
  return known;
}

std::vector<std::string> shipped_configs() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(fs::path(COCKTAIL_SOURCE_DIR) / "configs")) {
    if (entry.path().extension() == ".toml") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// "budget-3bit.toml" -> "budget_3bit", a test name.
std::string test_name(const ::testing::TestParamInfo<std::string>& config) {
  std::string name = fs::path(config.param).stem().string();
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

class ShippedConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedConfig, WorksWithEveryCommandOrIsRefusedWithAReason) {
  const ScratchDir dir;
  for (auto [command, args] : commands(dir)) {
    args.insert(args.end(), {"--config", shipped_config(GetParam())});
    const CliResult r = run_cli(args);
    const auto refusal = refusals().find({GetParam(), command});
    if (refusal == refusals().end()) {
      EXPECT_EQ(r.exit_code, 0) << command << ":\n" << r.err;
      continue;
    }
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_THAT(r.err, HasSubstr(refusal->second)) << command;
    expect_no_sanitizer_report(r);
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, ShippedConfig, ::testing::ValuesIn(shipped_configs()), test_name);

}  // namespace
}  // namespace cocktail::testing
