#include "llama_cpp_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <span>

#include "cocktail/config.hpp"
#include "cocktail/session.hpp"

namespace cocktail::models {

Engine fp16_cpu_engine(const std::string& simd) {
  return Engine(
      parse_config("[engine]\nbackend = \"cpu\"\nplanner = \"uniform\"\n"
                   "[planner.uniform]\nprecision = \"fp16\"\n[backend.cpu]\nsimd = \"" +
                       simd + "\"\n",
                   "llama_cpp_fixtures.toml"));
}

nlohmann::json read_fixture(const std::string& model, const std::string& name) {
  const std::string path =
      std::string(COCKTAIL_SOURCE_DIR) + "/tests/fixtures/" + model + "/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in) << "missing fixture " << path;
  return nlohmann::json::parse(in);
}

void expect_token_ids_match(const BpeTokenizer& tokenizer, const nlohmann::json& tokens) {
  for (const nlohmann::json& c : tokens.at("cases")) {
    const std::string text = c.at("text");
    EXPECT_EQ(tokenizer.encode(text, false), c.at("ids").get<std::vector<TokenId>>())
        << c.at("name");
    EXPECT_EQ(tokenizer.encode(text, true), c.at("ids_special").get<std::vector<TokenId>>())
        << c.at("name");
  }
}

std::vector<std::vector<float>> logits_at_positions(const LlamaWeights& weights,
                                                    const Engine& engine,
                                                    const nlohmann::json& prompt,
                                                    std::vector<TokenId>& greedy) {
  const LlamaModel& model = weights.model();
  const auto ids = model.tokenizer().encode(prompt.at("prompt").get<std::string>(), true);
  EXPECT_EQ(ids, prompt.at("ids").get<std::vector<TokenId>>()) << prompt.at("name");
  Session session = engine.new_session(model.hparams().kv_shape());
  LlamaRunner runner(weights, 128);
  std::vector<float> out(static_cast<std::size_t>(model.hparams().n_vocab));
  std::vector<std::vector<float>> rows;
  std::size_t done = 0;
  for (const nlohmann::json& at : prompt.at("positions")) {
    const auto pos = at.at("pos").get<std::size_t>();
    runner.prefill(session, std::span(ids).subspan(done, pos + 1 - done), out);
    done = pos + 1;
    rows.push_back(out);
  }
  runner.prefill(session, std::span(ids).subspan(done), out);
  const std::size_t n = prompt.at("greedy").at("ids").size();
  for (std::size_t i = 0; i < n; ++i) {
    greedy.push_back(TokenId(arg_max(out)));
    if (i + 1 < n) runner.step(session, greedy.back(), out);
  }
  return rows;
}

int arg_max(const std::vector<float>& row) {
  return int(std::max_element(row.begin(), row.end()) - row.begin());
}

double worst_difference(const std::vector<float>& ours, const nlohmann::json& position) {
  const nlohmann::json& ids = position.at("top_ids");
  const nlohmann::json& logits = position.at("top_logits");
  double worst = 0.0;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    worst = std::max(worst,
                     std::fabs(double(ours[ids[k].get<std::size_t>()]) - logits[k].get<double>()));
  }
  return worst;
}

}  // namespace cocktail::models
