// Synthetic models: they read as Llama models of their shape, encode any text, keep their
// activations finite through every layer, and are written the same every time.
#include "cocktail/models/synthetic_llama.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include "cocktail/config.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/error.hpp"
#include "cocktail/models/llama_model.hpp"
#include "models/gguf/gguf_writer.hpp"
#include "support/error_of.hpp"

namespace cocktail::models {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using ::testing::HasSubstr;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path written(const SyntheticLlama& model, const testing::TempDir& dir) {
  const fs::path path = dir.path() / model.file_name();
  model.write(path);
  return path;
}

TEST(SyntheticLlamaShapes, AreTheRealModelsShapes) {
  const SyntheticLlamaShape& smollm2 = synthetic_llama_shape("smollm2-135m");
  EXPECT_EQ(smollm2.n_layers, 30);
  EXPECT_EQ(smollm2.n_embd, 576);
  EXPECT_EQ(smollm2.n_heads, 9);
  EXPECT_EQ(smollm2.n_kv_heads, 3);
  EXPECT_EQ(smollm2.head_dim(), 64);
  EXPECT_EQ(smollm2.n_ff, 1536);
  EXPECT_EQ(smollm2.n_vocab, 49152);
  EXPECT_TRUE(smollm2.tied_output);
  const SyntheticLlamaShape& llama2 = synthetic_llama_shape("llama2-7b");
  EXPECT_EQ(llama2.n_layers, 32);
  EXPECT_EQ(llama2.n_embd, 4096);
  EXPECT_EQ(llama2.n_heads, 32);
  EXPECT_EQ(llama2.n_kv_heads, 32);
  EXPECT_EQ(llama2.head_dim(), 128);
  EXPECT_EQ(llama2.n_ff, 11008);
  EXPECT_EQ(llama2.n_vocab, 32000);
  EXPECT_FALSE(llama2.tied_output);
  for (const SyntheticLlamaShape* shape : {&smollm2, &llama2})
    EXPECT_GE(shape->context_length, 32768 + 1024) << shape->name;

  EXPECT_THAT(error_of<Error>([] { synthetic_llama_shape("llama3"); }),
              HasSubstr("no synthetic model shape named 'llama3'; shapes: tiny (context 4096), "
                        "smollm2-135m (context 36864), llama2-7b (context 36864)"));
}

class SyntheticLlamaTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  Engine engine_{parse_config("[engine]\nbackend = \"cpu\"\n", "synthetic_llama_test.toml")};
};

TEST_F(SyntheticLlamaTest, ReadsAsALlamaModelOfItsShape) {
  for (const std::string_view name : {"tiny", "smollm2-135m"}) {
    SCOPED_TRACE(name);
    const SyntheticLlama synthetic(synthetic_llama_shape(name));
    const fs::path path = written(synthetic, dir_);
    EXPECT_EQ(path.filename(), "synthetic-" + std::string(name) + ".gguf");
    EXPECT_EQ(fs::file_size(path), synthetic.file_size());

    const LlamaModel model(path);
    const SyntheticLlamaShape& shape = synthetic.shape();
    const LlamaHyperparameters& h = model.hparams();
    EXPECT_EQ(h.n_layers, shape.n_layers);
    EXPECT_EQ(h.n_embd, shape.n_embd);
    EXPECT_EQ(h.n_heads, shape.n_heads);
    EXPECT_EQ(h.n_kv_heads, shape.n_kv_heads);
    EXPECT_EQ(h.n_ff, shape.n_ff);
    EXPECT_EQ(h.n_vocab, shape.n_vocab);
    EXPECT_EQ(h.context_length, shape.context_length);
    EXPECT_EQ(model.output_tied(), shape.tied_output);
    EXPECT_EQ(model.token_embedding().type, TensorType::q4_0);

    // One token per byte, whatever the text.
    const BpeTokenizer& tokenizer = model.tokenizer();
    const std::string text = "Hi, caf\xc3\xa9\n\x01";
    const std::vector<TokenId> ids = tokenizer.encode(text, false);
    EXPECT_EQ(ids.size(), text.size());
    EXPECT_EQ(tokenizer.decode(ids, false), text);
    const std::optional<TokenId> end = tokenizer.find("<|im_end|>");
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(tokenizer.vocabulary().eos, end);
    EXPECT_EQ(tokenizer.vocabulary().types[std::size_t(*end)], TokenType::control);
    EXPECT_EQ(tokenizer.encode("<|im_start|>user", true).front(), tokenizer.find("<|im_start|>"));
  }
}

// Through SmolLM2's 30 layers the logits stay finite and about as large as a normalized vector
// times a matrix of spread 1/sqrt(columns) makes them.
TEST_F(SyntheticLlamaTest, LogitsStayFiniteThroughEveryLayer) {
  const SyntheticLlama synthetic(synthetic_llama_shape("smollm2-135m"));
  const LlamaModel model(written(synthetic, dir_));
  const LlamaWeights weights(model, engine_.backend());
  LlamaRunner runner(weights, 16);
  Session session = engine_.new_session(model.hparams().kv_shape());
  const std::vector<TokenId> prompt =
      model.tokenizer().encode("The strongroom's code is 4471.", false);
  std::vector<float> logits(std::size_t(model.hparams().n_vocab));
  runner.prefill(session, prompt, logits);
  for (const TokenId next : {TokenId(65), TokenId(66)}) {
    runner.step(session, next, logits);
    ASSERT_TRUE(
        std::all_of(logits.begin(), logits.end(), [](float x) { return std::isfinite(x); }));
    const double squares = std::inner_product(logits.begin(), logits.end(), logits.begin(), 0.0);
    const double rms = std::sqrt(squares / double(logits.size()));
    EXPECT_GT(rms, 0.3);
    EXPECT_LT(rms, 3.0);
  }
}

TEST_F(SyntheticLlamaTest, WritesTheSameFileEveryTime) {
  const SyntheticLlama synthetic(synthetic_llama_shape("tiny"));
  const fs::path first = written(synthetic, dir_);
  const fs::path second = dir_.path() / "again.gguf";
  synthetic.write(second);
  EXPECT_EQ(read_all(first), read_all(second));
}

// A file matches only when it is the same shape's, from the same recipe, and whole.
TEST_F(SyntheticLlamaTest, MatchesOnlyItsOwnCompleteFile) {
  const SyntheticLlama tiny(synthetic_llama_shape("tiny"));
  const fs::path path = written(tiny, dir_);
  EXPECT_TRUE(tiny.matches(path));
  EXPECT_FALSE(tiny.matches(dir_.path() / "absent.gguf"));
  EXPECT_FALSE(tiny.matches(dir_.path()));
  EXPECT_FALSE(SyntheticLlama(synthetic_llama_shape("smollm2-135m")).matches(path));

  std::string bytes = read_all(path);
  const auto write_copy = [&](const std::string& content) {
    const fs::path copy = dir_.path() / "copy.gguf";
    std::ofstream(copy, std::ios::binary | std::ios::trunc) << content;
    return copy;
  };
  EXPECT_FALSE(tiny.matches(write_copy(bytes.substr(0, bytes.size() - 1))));
  const std::size_t recipe = bytes.find("cocktail.synthetic.recipe");
  ASSERT_NE(recipe, std::string::npos);
  bytes[recipe + 25 + 4] ^= 1;  // the recipe's number, after the key and the value's type
  EXPECT_FALSE(tiny.matches(write_copy(bytes)));
}

TEST_F(SyntheticLlamaTest, WritesIntoAFolderItMakes) {
  const SyntheticLlama tiny(synthetic_llama_shape("tiny"));
  const fs::path path = dir_.path() / "models" / "cache" / tiny.file_name();
  tiny.write(path);
  EXPECT_TRUE(tiny.matches(path));
}

}  // namespace
}  // namespace cocktail::models
