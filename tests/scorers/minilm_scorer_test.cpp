// The MiniLM scorer on a tiny random BERT folder (tests/models/bert/tiny_bert.hpp): scores are
// the cosines of the float64 reference embeddings; config and setup errors; and the plugin as
// the engine loads it.
#include "minilm_scorer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cocktail/config.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/error.hpp"
#include "models/bert/tiny_bert.hpp"
#include "support/direct_cpu_backend.hpp"
#include "support/error_of.hpp"

namespace cocktail::scorers {
namespace {

using ::testing::AllOf;
using testing::error_of;
using ::testing::HasSubstr;
using testing::TinyBert;

Options options(const std::map<std::string, Options::Value>& values) {
  Options o("scorer.minilm", {"test.toml", 1});
  int line = 2;
  for (const auto& [key, value] : values) o.set(key, value, {"test.toml", line++});
  return o;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

class MiniLmScorerTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  TinyBert tiny_{5};
  std::string folder_ = tiny_.write(dir_).string();
  // Chunk texts and the ids the tiny vocabulary gives them ([CLS] 2, [SEP] 3, "w<i>" i).
  std::vector<std::string> chunks_ = {"w5 w6 w7", "", "w9, w10 w11 w12 w13 w14 w15 w16 w17 w18",
                                      "w20"};
  std::vector<std::vector<std::int32_t>> ids_ = {
      {2, 5, 6, 7, 3}, {2, 3}, {2, 9, 1, 10, 11, 12, 13, 14, 15, 16, 3}, {2, 20, 3}};
  std::vector<std::int32_t> query_ids_ = {2, 8, 20, 3};
};

TEST_F(MiniLmScorerTest, ScoresAreCosinesOfTheEmbeddings) {
  // Batches of 12 tokens: the chunks are embedded in several forwards; max_seq_tokens 11 cuts
  // the third chunk's last piece.
  Options o = options({{"model_dir", folder_}, {"batch_tokens", 12}, {"max_seq_tokens", 11}});
  MiniLmScorer scorer(o);
  o.finish();
  scorer.use_backend(testing::cpu_backend());
  const std::vector<double> scores = scorer.score(ScoringInput{chunks_, {}, "w8 W20"});
  const std::vector<double> query = tiny_.reference_embedding(query_ids_);
  ASSERT_EQ(scores.size(), chunks_.size());
  for (std::size_t c = 0; c < chunks_.size(); ++c) {
    EXPECT_NEAR(scores[c], dot(query, tiny_.reference_embedding(ids_[c])), 2e-6) << c;
  }
  EXPECT_TRUE(scorer.score(ScoringInput{{}, {}, "w8"}).empty());
  EXPECT_EQ(scorer.name(), "minilm");
}

TEST_F(MiniLmScorerTest, NeedsABackendBeforeScoring) {
  Options o = options({{"model_dir", folder_}});
  MiniLmScorer scorer(o);
  EXPECT_THAT(error_of<Error>([&] {
                scorer.score(ScoringInput{chunks_, {}, "w8"});
              }),
              HasSubstr("no backend to run the encoder on; the host must call use_backend()"));
}

TEST_F(MiniLmScorerTest, ConfigErrors) {
  Options missing = options({{"model_dir", dir_.path().string() + "/absent"}});
  EXPECT_THAT(error_of<Error>([&] { MiniLmScorer{missing}; }),
              AllOf(HasSubstr("no model in " + dir_.path().string() + "/absent"),
                    HasSubstr("run scripts/fetch-models")));
  // The tiny model reads 12 tokens at most.
  Options too_long = options({{"model_dir", folder_}, {"max_seq_tokens", 13}});
  EXPECT_THAT(error_of<ConfigError>([&] { MiniLmScorer{too_long}; }),
              HasSubstr("scorer.minilm.max_seq_tokens = 13 is out of range; allowed: 2 to 12"));
  Options over = options({{"model_dir", folder_}, {"max_seq_tokens", 257}});
  EXPECT_THAT(error_of<ConfigError>([&] { MiniLmScorer{over}; }), HasSubstr("max_seq_tokens"));
  Options zero = options({{"model_dir", folder_}, {"batch_tokens", 0}});
  EXPECT_THAT(error_of<ConfigError>([&] { MiniLmScorer{zero}; }),
              HasSubstr("batch_tokens = 0 is out of range"));
}

TEST_F(MiniLmScorerTest, DefaultFolderIsInTheModelCache) {
  const char* saved = std::getenv("COCKTAIL_MODEL_DIR");
  const std::string restore = saved ? saved : "";
  setenv("COCKTAIL_MODEL_DIR", "/models/here", 1);
  EXPECT_EQ(MiniLmScorer::default_model_dir(), "/models/here/all-MiniLM-L6-v2");
  if (saved) {
    setenv("COCKTAIL_MODEL_DIR", restore.c_str(), 1);
  } else {
    unsetenv("COCKTAIL_MODEL_DIR");
  }
}

// The plugin as the engine loads it: the engine hands it its backend.
TEST_F(MiniLmScorerTest, LoadsAsAPlugin) {
  const Engine engine(
      parse_config("[engine]\nbackend = \"cpu\"\nscorer = \"minilm\"\n"
                   "[scorer.minilm]\nmodel_dir = \"" +
                       folder_ + "\"\n",
                   "minilm_scorer_test.toml"));
  EXPECT_EQ(engine.scorer().name(), "minilm");
  const std::vector<double> scores = engine.scorer().score(ScoringInput{chunks_, {}, "w8 w20"});
  const std::vector<double> query = tiny_.reference_embedding(query_ids_);
  ASSERT_EQ(scores.size(), chunks_.size());
  EXPECT_NEAR(scores[0], dot(query, tiny_.reference_embedding(ids_[0])), 2e-6);
  EXPECT_NEAR(scores[3], dot(query, tiny_.reference_embedding(ids_[3])), 2e-6);
}

}  // namespace
}  // namespace cocktail::scorers
