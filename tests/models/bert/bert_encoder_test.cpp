// The BERT sentence encoder on a tiny random model (tiny_bert.hpp) against a float64 reference
// forward, and the errors of a folder that is not a supported BERT.
#include "cocktail/models/bert_encoder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "cocktail/error.hpp"
#include "support/direct_cpu_backend.hpp"
#include "support/error_of.hpp"
#include "tiny_bert.hpp"

namespace cocktail::models {
namespace {

using ::testing::AllOf;
using testing::error_of;
using ::testing::HasSubstr;
using testing::TinyBert;

std::vector<std::vector<std::int32_t>> random_sequences(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> id(0, TinyBert::kVocab - 1);
  std::vector<std::vector<std::int32_t>> out;
  for (const int length : {1, 5, TinyBert::kMaxSeq, 2, 7, 3}) {
    std::vector<std::int32_t> ids(static_cast<std::size_t>(length));
    for (auto& t : ids) t = id(rng);
    out.push_back(std::move(ids));
  }
  return out;
}

class TinyBertTest : public ::testing::Test {
 protected:
  std::string open_error(const std::map<std::string, std::string>& edits,
                         const std::string& skip = "") {
    tiny_.write(dir_, edits, skip);
    return error_of<Error>([&] { BertModel{dir_.path()}; });
  }

  testing::TempDir dir_;
  TinyBert tiny_{11};
  std::shared_ptr<Backend> backend_ = testing::cpu_backend();
};

TEST_F(TinyBertTest, ReadsConfigAndTokenizer) {
  const BertModel model(tiny_.write(dir_));
  const BertConfig& c = model.config();
  EXPECT_EQ(c.hidden_size, TinyBert::kHidden);
  EXPECT_EQ(c.n_heads, TinyBert::kHeads);
  EXPECT_EQ(c.head_dim(), TinyBert::kHidden / TinyBert::kHeads);
  EXPECT_EQ(c.n_layers, TinyBert::kLayers);
  EXPECT_EQ(c.intermediate_size, TinyBert::kIntermediate);
  EXPECT_EQ(c.max_seq_length, TinyBert::kMaxSeq);
  EXPECT_EQ(c.layer_norm_eps, float(TinyBert::kEps));
  EXPECT_EQ(model.tokenizer().encode("w5 W7, w9", 12),
            (std::vector<std::int32_t>{2, 5, 7, 1, 9, 3}));
  EXPECT_EQ(model.layers().size(), std::size_t(TinyBert::kLayers));
  EXPECT_EQ(model.layers()[0].intermediate.weight.type, TensorType::f16);
}

// Every batch size, from one sequence per forward to all of them in one.
TEST_F(TinyBertTest, MatchesTheFloat64Reference) {
  const BertModel model(tiny_.write(dir_));
  const auto sequences = random_sequences(3);
  for (const std::int64_t batch_tokens : {1, 12, 20, 1000}) {
    BertEncoder encoder(model, backend_, batch_tokens);
    const std::vector<float> got = encoder.embed(sequences);
    ASSERT_EQ(got.size(), sequences.size() * TinyBert::kHidden);
    for (std::size_t s = 0; s < sequences.size(); ++s) {
      const std::vector<double> want = tiny_.reference_embedding(sequences[s]);
      for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_NEAR(got[s * TinyBert::kHidden + i], want[i], 2e-6)
            << "batch_tokens " << batch_tokens << " sequence " << s << " element " << i;
      }
    }
  }
  BertEncoder encoder(model, backend_, 64);
  EXPECT_TRUE(encoder.embed({}).empty());
}

TEST_F(TinyBertTest, RejectsSequencesItCannotRead) {
  const BertModel model(tiny_.write(dir_));
  BertEncoder encoder(model, backend_, 64);
  const std::vector<std::vector<std::int32_t>> too_long = {
      {2, 3}, std::vector<std::int32_t>(TinyBert::kMaxSeq + 1, 5)};
  EXPECT_THAT(error_of<Error>([&] { encoder.embed(too_long); }),
              HasSubstr("sequence 1 has 13 tokens; allowed: 1 to 12"));
  const std::vector<std::vector<std::int32_t>> empty = {{}};
  EXPECT_THAT(error_of<Error>([&] { encoder.embed(empty); }), HasSubstr("sequence 0 has 0 tokens"));
  const std::vector<std::vector<std::int32_t>> bad_id = {{2, TinyBert::kVocab, 3}};
  EXPECT_THAT(error_of<Error>([&] { encoder.embed(bad_id); }),
              HasSubstr("id 24 at position 1 is outside the table's 24 rows"));
  EXPECT_THAT(error_of<Error>([&] { BertEncoder(model, backend_, 0); }),
              HasSubstr("batch of 0 tokens; at least 1"));
}

TEST_F(TinyBertTest, ConfigErrorsNameFileAndField) {
  EXPECT_THAT(open_error({{"hidden_act", "\"gelu_new\""}}),
              AllOf(HasSubstr("config.json: hidden_act = \"gelu_new\"; only \"gelu\""),
                    HasSubstr(dir_.path().string())));
  EXPECT_THAT(open_error({{"model_type", "\"roberta\""}}),
              HasSubstr("model_type = \"roberta\"; only \"bert\" is supported"));
  EXPECT_THAT(open_error({{"position_embedding_type", "\"relative_key\""}}),
              HasSubstr("position_embedding_type = \"relative_key\""));
  EXPECT_THAT(open_error({{"num_attention_heads", "3"}}),
              HasSubstr("hidden_size 8 is not a multiple of num_attention_heads 3"));
  EXPECT_THAT(open_error({{"num_hidden_layers", "0"}}),
              HasSubstr("num_hidden_layers = 0; allowed: an integer from 1 to 1024"));
  EXPECT_THAT(open_error({{"layer_norm_eps", "\"small\""}}),
              HasSubstr("layer_norm_eps = \"small\"; allowed: a number"));
  EXPECT_THAT(open_error({{"max_position_embeddings", "8"}}),
              HasSubstr("sentence_bert_config.json: max_seq_length = 12; allowed: an integer "
                        "from 2 to 8"));
  EXPECT_THAT(open_error({{"vocab_size", "30"}}),
              HasSubstr("vocab.txt: 24 tokens, but config.json has vocab_size 30"));
}

TEST_F(TinyBertTest, TensorErrorsNameTheTensor) {
  EXPECT_THAT(
      open_error({}, "encoder.layer.1.output.dense.bias"),
      HasSubstr("model.safetensors: tensor 'encoder.layer.1.output.dense.bias' is missing"));
  // A config that disagrees with the tensors.
  EXPECT_THAT(open_error({{"intermediate_size", "32"}}),
              HasSubstr("tensor 'encoder.layer.0.intermediate.dense.weight' has shape [16, 8]; "
                        "expected [32, 8]"));
  EXPECT_THAT(open_error({{"type_vocab_size", "1"}}),
              HasSubstr("tensor 'embeddings.token_type_embeddings.weight' has shape [2, 8]; "
                        "expected [1, 8]"));
}

}  // namespace
}  // namespace cocktail::models
