#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "run_cli.hpp"

// `cocktail eval` with the real model on one small case of its own: the reports are complete,
// the FP16 cache agrees with itself, and quantized caches pay in KL divergence for their bytes.
namespace cocktail::testing {
namespace {

using ::testing::HasSubstr;

TEST(EvalCommand, RunsEveryMethodOnACustomCaseAndWritesTheReport) {
  ScratchDir dir;
  const std::string context =
      "The lighthouse keeper kept a logbook. Storms came in the autumn and the lamp was cleaned "
      "every morning. The secret code for the copper gate is 5821. Ships passed at night and "
      "the keeper counted them. In winter the path froze and supplies came by boat.";
  dir.write("cases.jsonl",
            nlohmann::json{{"id", "gate"},
                           {"question", "What is the secret code for the copper gate?"},
                           {"expected", "5821"},
                           {"context", context}}
                    .dump() +
                "\n");
  const std::string suite = dir.write("suite.toml", "kinds = []\ncases = \"cases.jsonl\"\n");
  const std::string json = dir.path("results.json").string();
  const std::string report = dir.path("report").string();
  const CliResult r =
      run_cli({"eval", "--config", shipped_config("paper.toml"), "--suite", suite, "--methods",
               "fp16,int2,cocktail@attention,budget-4@bm25,int2+ls", "--max-tokens", "12", "--json",
               json, "--report", report, "--set", "engine.scorer=bm25", "--set",
               "planner.cocktail.chunk_size=8", "--set", "planner.budget.chunk_size=8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("| cocktail@attention |"));
  const nlohmann::json out = nlohmann::json::parse(read_file(json));
  ASSERT_EQ(out.at("methods").size(), 5u);
  const nlohmann::json& fp16 = out["methods"][0];
  EXPECT_EQ(fp16.at("name"), "fp16");
  EXPECT_NEAR(fp16.at("kld").get<double>(), 0.0, 1e-6);
  EXPECT_EQ(fp16.at("top1").get<double>(), 1.0);
  EXPECT_EQ(fp16.at("avg_code_bits").get<double>(), 16.0);
  EXPECT_EQ(fp16.at("avg_bits").get<double>(), 16.0);
  EXPECT_EQ(fp16.at("token_share"), nlohmann::json({{"fp16", 1.0}}));
  const nlohmann::json& int2 = out["methods"][1];
  EXPECT_LT(int2.at("kv_bytes_ratio").get<double>(), 0.5);
  // Scales and zeros cost bits beyond the codes.
  EXPECT_GT(int2.at("avg_bits").get<double>(), int2.at("avg_code_bits").get<double>());
  // The uniform planner's full chunks of 32 tokens go to INT2; only a remainder of fewer than 32
  // tokens stays FP16.
  const nlohmann::json& point = int2.at("cases").at(0).at("operating_point");
  const double int2_tokens = 32.0 * point.at("chunks_per_precision").at("int2").get<double>();
  const double int2_share = point.at("token_share").at("int2").get<double>();
  EXPECT_LE(int2_share, 1.0);
  EXPECT_GT(int2_share, int2_tokens / (int2_tokens + 32.0));
  EXPECT_EQ(int2.at("token_share"), point.at("token_share"));  // the mean over its one case
  EXPECT_GT(int2.at("kld").get<double>(), fp16.at("kld").get<double>());
  const nlohmann::json& budget = out["methods"][3];
  EXPECT_LE(budget.at("avg_code_bits").get<double>(), 4.0 + 1e-9);
  // +ls changes the codes, not the bytes.
  const nlohmann::json& int2_ls = out["methods"][4];
  EXPECT_EQ(int2_ls.at("name"), "int2+ls");
  EXPECT_EQ(int2_ls.at("kv_bytes_ratio"), int2.at("kv_bytes_ratio"));
  EXPECT_NE(int2_ls.at("kld").get<double>(), int2.at("kld").get<double>());
  for (const nlohmann::json& method : out["methods"]) {
    const nlohmann::json& c = method.at("cases").at(0);
    EXPECT_EQ(c.at("id"), "gate");
    EXPECT_FALSE(c.at("answer").get<std::string>().empty()) << method.at("name");
    EXPECT_GE(c.at("plan_s").get<double>(), 0.0);
  }
  for (const char* file :
       {"results.md", "results.json", "accuracy-vs-bits.svg", "kld-vs-bits.svg"}) {
    EXPECT_FALSE(read_file(report + "/" + file).empty()) << file;
  }
}

// The context tokens of `method`'s case at each precision, from its operating point.
std::map<std::string, double> tokens_by_precision(const nlohmann::json& method, double context) {
  std::map<std::string, double> tokens;
  const nlohmann::json& point = method.at("cases").at(0).at("operating_point");
  for (const auto& [precision, share] : point.at("token_share").items()) {
    tokens[precision] = share.get<double>() * context;
  }
  return tokens;
}

TEST(EvalCommand, KiviWindowKeepsTheNewest128TokensFp16AndCountsThem) {
  ScratchDir dir;
  std::string context;
  for (int i = 0; i < 30; ++i) {
    context += "The ferry left the harbour at dawn and the gulls followed it out to sea. ";
  }
  dir.write("cases.jsonl", nlohmann::json{{"id", "ferry"},
                                          {"question", "When did the ferry leave?"},
                                          {"expected", "dawn"},
                                          {"context", context}}
                                   .dump() +
                               "\n");
  const std::string suite = dir.write("suite.toml", "kinds = []\ncases = \"cases.jsonl\"\n");
  const std::string json = dir.path("results.json").string();
  const CliResult r =
      run_cli({"eval", "--config", shipped_config("paper.toml"), "--suite", suite, "--methods",
               "kivi-int2,kivi-int2-w128", "--max-tokens", "4", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json out = nlohmann::json::parse(read_file(json));
  const nlohmann::json& plain = out["methods"][0];
  const nlohmann::json& window = out["methods"][1];
  // Without the window every full chunk of 32 is INT2 and only the remainder FP16, which gives
  // the context's length.
  const nlohmann::json& plain_point = plain.at("cases").at(0).at("operating_point");
  const double full_chunks = plain_point.at("chunks_per_precision").at("int2").get<double>();
  const double context_tokens =
      32.0 * full_chunks / plain_point.at("token_share").at("int2").get<double>();
  const double window_fp16 = tokens_by_precision(window, context_tokens).at("fp16");
  const double plain_fp16 = tokens_by_precision(plain, context_tokens)["fp16"];
  // 128 newest tokens less the question's, rounded out to whole chunks.
  EXPECT_GT(window_fp16 - plain_fp16, 64.0);
  EXPECT_LE(window_fp16, 128.0 + 31.0);
  EXPECT_NEAR(window.at("avg_code_bits").get<double>(), 2.0 + 14.0 * window_fp16 / context_tokens,
              1e-9);
  EXPECT_GT(window.at("kv_bytes_ratio").get<double>(), plain.at("kv_bytes_ratio").get<double>());
}

// A suite file of generated cases at 128 tokens and depth 0.5 in the tests' own haystack, with
// `kinds` (TOML lines) saying which.
std::string small_suite(ScratchDir& dir, const std::string& kinds) {
  return dir.write("suite.toml", "haystack = \"" COCKTAIL_SOURCE_DIR
                                 "/tests/eval/data/haystack\"\n"
                                 "lengths = [128]\ndepths = [0.5]\n" +
                                     kinds);
}

TEST(EvalCommand, RulerKindsRunWithTheModelsTokenizerAndGetAColumnEach) {
  ScratchDir dir;
  const std::string suite =
      small_suite(dir, R"(kinds = ["multi-key", "variable-tracking", "common-words"]
common_words = 3
)");
  const std::string report = dir.path("report").string();
  const CliResult r = run_cli(
      {"eval", "--suite", suite, "--methods", "fp16", "--max-tokens", "4", "--report", report});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* kind : {"multi-key", "variable-tracking", "common-words"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("| ") + kind + " |")) << kind;
  }
  const nlohmann::json out = nlohmann::json::parse(read_file(report + "/results.json"));
  const nlohmann::json& fp16 = out["methods"][0];
  ASSERT_EQ(fp16.at("cases").size(), 3u);
  for (const nlohmann::json& c : fp16.at("cases")) EXPECT_EQ(c.at("length"), 128) << c.at("id");
  EXPECT_EQ(fp16.at("contains_by_kind").size(), 3u);
  // A heatmap for the kind placed by depth only.
  EXPECT_FALSE(read_file(report + "/multi-key-fp16.svg").empty());
  EXPECT_FALSE(std::filesystem::exists(report + "/variable-tracking-fp16.svg"));
}

// A long run cut short goes on from its --json file: the cases there are kept as they are (the
// marked answer survives), the rest run, and a file of other methods is refused naming them.
TEST(EvalCommand, ResumeKeepsTheCasesOfTheJsonFileAndRunsTheRest) {
  ScratchDir dir;
  const std::string suite = small_suite(dir, R"(kinds = ["niah", "multi-key", "variable-tracking"]
)");
  const std::string full = dir.path("full.json").string();
  const std::vector<std::string> run = {"eval",      "--suite",      suite, "--methods",
                                        "fp16,int2", "--max-tokens", "4",   "--resume"};
  auto with_json = [&](const std::string& json) {
    std::vector<std::string> args = run;
    args.insert(args.end(), {"--json", json});
    return run_cli(args);
  };
  const CliResult first = with_json(full);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const nlohmann::json whole = nlohmann::json::parse(read_file(full));
  // Each write went through full.json.partial, renamed over full.json.
  EXPECT_FALSE(std::filesystem::exists(full + ".partial"));

  nlohmann::json cut = whole;
  for (nlohmann::json& method : cut["methods"]) {
    nlohmann::json first_case = method["cases"][0];
    first_case["answer"] = "kept from the first run";
    method["cases"] = nlohmann::json::array({first_case});
  }
  const std::string partial = dir.write("partial.json", cut.dump());
  const CliResult resumed = with_json(partial);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_THAT(resumed.err, HasSubstr("resuming: 1 of 3 cases read from " + partial));
  const nlohmann::json out = nlohmann::json::parse(read_file(partial));
  for (std::size_t m = 0; m < 2; ++m) {
    const nlohmann::json& cases = out["methods"][m]["cases"];
    ASSERT_EQ(cases.size(), 3u);
    EXPECT_EQ(cases[0]["answer"], "kept from the first run");
    for (std::size_t i = 1; i < 3; ++i) {
      EXPECT_EQ(cases[i]["id"], whole["methods"][m]["cases"][i]["id"]);
      EXPECT_EQ(cases[i]["answer"], whole["methods"][m]["cases"][i]["answer"]);
    }
  }

  const CliResult other = run_cli({"eval", "--suite", suite, "--methods", "fp16,int4",
                                   "--max-tokens", "4", "--resume", "--json", partial});
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_THAT(other.err, HasSubstr("--resume: " + partial + " has method \"int2\""));
  EXPECT_THAT(other.err, HasSubstr("where this run has int4"));
}

TEST(EvalCommand, UnknownMethodIsAnErrorListingTheKnownOnes) {
  const CliResult r = run_cli({"eval", "--methods", "fp16,int3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("unknown evaluation method 'int3'; known:"));
  const CliResult suffixed = run_cli({"eval", "--methods", "int3+ls"});
  EXPECT_EQ(suffixed.exit_code, 1);
  EXPECT_THAT(suffixed.err, HasSubstr("unknown evaluation method 'int3+ls'"));
  EXPECT_THAT(suffixed.err, HasSubstr("optionally followed by +ls"));
}

}  // namespace
}  // namespace cocktail::testing
