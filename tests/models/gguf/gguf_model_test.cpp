// Reads the real SmolLM2-135M-Instruct Q4_1 file that scripts/fetch-models downloads, and
// checks it against facts read from the same file with the Python gguf package (0.19):
//
//   r = gguf.GGUFReader(path); f = r.fields
//   f["llama.block_count"].parts[f["llama.block_count"].data[0]]  -> [30]
//   t = [t for t in r.tensors if t.name == "token_embd.weight"][0]
//   t.tensor_type.name, list(t.shape), t.data_offset - r.data_offset, t.n_bytes
//   fnv1a64(bytes(t.data.tobytes())[:4096])
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "cocktail/models/gguf_file.hpp"

namespace cocktail::models {
namespace {

namespace fs = std::filesystem;

constexpr const char* kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";

fs::path model_dir() {
  if (const char* dir = std::getenv("COCKTAIL_MODEL_DIR"); dir && *dir) return dir;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "") / ".cache" / "cocktail" / "models";
}

std::uint64_t fnv1a64(std::span<const std::byte> bytes) {
  std::uint64_t hash = 0xcbf29ce484222325u;
  for (const std::byte b : bytes) hash = (hash ^ std::uint64_t(b)) * 0x100000001b3u;
  return hash;
}

// One open of the model for every test; absent, each test fails and says how to get it
// (COCKTAIL_SKIP_MODEL_TESTS=1 skips them instead).
class SmolLm2File : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const fs::path path = model_dir() / kModel;
    if (fs::exists(path)) file_.emplace(path);
  }
  static void TearDownTestSuite() { file_.reset(); }

  void SetUp() override {
    if (file_) return;
    const char* skip = std::getenv("COCKTAIL_SKIP_MODEL_TESTS");
    if (skip && std::string(skip) == "1")
      GTEST_SKIP() << (model_dir() / kModel).string() << " is absent";
    FAIL() << (model_dir() / kModel).string()
           << " is absent: run scripts/fetch-models to download it (it goes to "
              "$COCKTAIL_MODEL_DIR, by default ~/.cache/cocktail/models), or set "
              "COCKTAIL_SKIP_MODEL_TESTS=1 to skip the tests that need it";
  }

  static const GgufFile& file() { return *file_; }

 private:
  static inline std::optional<GgufFile> file_;
};

TEST_F(SmolLm2File, Header) {
  EXPECT_EQ(file().version(), 3u);
  EXPECT_EQ(file().alignment(), 32u);
  EXPECT_EQ(file().metadata().size(), 33u);
  EXPECT_EQ(file().tensors().size(), 272u);
  EXPECT_EQ(file().data_offset(), 1785664u);
  EXPECT_EQ(file().file_size(), 98362432u);
}

TEST_F(SmolLm2File, ModelHyperparameters) {
  const GgufFile& f = file();
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_string("general.basename"), "smollm2");
  EXPECT_EQ(f.get_string_array("general.languages"), std::vector<std::string>{"en"});
  EXPECT_EQ(f.get_u32("general.file_type"), 3u);  // mostly Q4_1
  EXPECT_EQ(f.get_u32("llama.block_count"), 30u);
  EXPECT_EQ(f.get_u32("llama.context_length"), 8192u);
  EXPECT_EQ(f.get_u32("llama.embedding_length"), 576u);
  EXPECT_EQ(f.get_u32("llama.feed_forward_length"), 1536u);
  EXPECT_EQ(f.get_u32("llama.attention.head_count"), 9u);
  EXPECT_EQ(f.get_u32("llama.attention.head_count_kv"), 3u);
  EXPECT_EQ(f.get_u32("llama.rope.dimension_count"), 64u);
  EXPECT_EQ(f.get_f32("llama.rope.freq_base"), 100000.0f);
  EXPECT_EQ(f.get_f32("llama.attention.layer_norm_rms_epsilon"), 1e-5f);
  EXPECT_EQ(f.get_u32("llama.vocab_size"), 49152u);
  EXPECT_EQ(f.find_u32("llama.expert_count"), std::nullopt);
}

TEST_F(SmolLm2File, Tokenizer) {
  const GgufFile& f = file();
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), "smollm");
  EXPECT_FALSE(f.get_bool("tokenizer.ggml.add_bos_token"));
  EXPECT_EQ(f.get_u32("tokenizer.ggml.bos_token_id"), 1u);
  EXPECT_EQ(f.get_u32("tokenizer.ggml.eos_token_id"), 2u);
  EXPECT_EQ(f.get_u32("tokenizer.ggml.padding_token_id"), 2u);

  const std::vector<std::string> tokens = f.get_string_array("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 49152u);
  EXPECT_EQ(tokens[0], "<|endoftext|>");
  EXPECT_EQ(tokens[1], "<|im_start|>");
  EXPECT_EQ(tokens[2], "<|im_end|>");
  EXPECT_EQ(tokens[1000], "()");
  EXPECT_EQ(tokens[49151], "ectable");

  const std::vector<std::string> merges = f.get_string_array("tokenizer.ggml.merges");
  ASSERT_EQ(merges.size(), 48900u);
  EXPECT_EQ(merges.front(), "\xc4\xa0 t");  // "Ġ t"
  EXPECT_EQ(merges.back(), "ect able");

  const std::vector<std::int32_t> types = f.get_i32_array("tokenizer.ggml.token_type");
  ASSERT_EQ(types.size(), 49152u);
  EXPECT_EQ(std::count(types.begin(), types.end(), 1), 49135);
  EXPECT_EQ(std::count(types.begin(), types.end(), 3), 17);

  const std::string chat = f.get_string("tokenizer.chat_template");
  EXPECT_EQ(chat.size(), 368u);
  EXPECT_EQ(fnv1a64(std::as_bytes(std::span(chat))), 0x45ec583d4d25bc3au);
}

TEST_F(SmolLm2File, Tensors) {
  const GgufFile& f = file();
  std::map<TensorType, int> per_type;
  for (const GgufTensor& t : f.tensors()) ++per_type[t.type];
  EXPECT_EQ(per_type, (std::map<TensorType, int>{
                          {TensorType::f32, 61}, {TensorType::q8_0, 1}, {TensorType::q4_1, 210}}));
  EXPECT_EQ(f.tensors()[8].name, "blk.0.attn_q.weight");
  EXPECT_EQ(f.tensors().back().name, "output_norm.weight");

  const GgufTensor& embd = f.tensor("token_embd.weight");
  EXPECT_EQ(embd.type, TensorType::q8_0);
  EXPECT_EQ(embd.dims, (std::vector<std::int64_t>{576, 49152}));
  EXPECT_EQ(embd.offset, 0u);
  EXPECT_EQ(embd.bytes, 30081024u);
  EXPECT_EQ(fnv1a64(embd.span().first(4096)), 0x28cb314157b9bc7cu);

  const GgufTensor& q = f.tensor("blk.0.attn_q.weight");
  EXPECT_EQ(q.type, TensorType::q4_1);
  EXPECT_EQ(q.dims, (std::vector<std::int64_t>{576, 576}));
  EXPECT_EQ(q.offset, 32020992u);
  EXPECT_EQ(q.bytes, 207360u);
  EXPECT_EQ(fnv1a64(q.span().first(4096)), 0xf9e87c5c76bcec68u);

  const GgufTensor& k = f.tensor("blk.0.attn_k.weight");
  EXPECT_EQ(k.dims, (std::vector<std::int64_t>{576, 192}));  // 3 KV heads of 64
  EXPECT_EQ(fnv1a64(k.span().first(4096)), 0xa514f073f1e27957u);

  const GgufTensor& down = f.tensor("blk.29.ffn_down.weight");
  EXPECT_EQ(down.dims, (std::vector<std::int64_t>{1536, 576}));
  EXPECT_EQ(down.offset, 78845184u);
  EXPECT_EQ(fnv1a64(down.span().first(4096)), 0xe891385e46dba162u);

  const GgufTensor& norm = f.tensor("output_norm.weight");
  EXPECT_EQ(norm.type, TensorType::f32);
  EXPECT_EQ(norm.dims, std::vector<std::int64_t>{576});
  EXPECT_EQ(norm.offset, 96574464u);
  EXPECT_EQ(fnv1a64(norm.span()), 0xea814bed6299e304u);
  float first[4];
  std::memcpy(first, norm.data, sizeof first);
  EXPECT_EQ(first[0], 1.7578125f);
  EXPECT_EQ(first[1], 1.8203125f);
  EXPECT_EQ(first[2], 1.78125f);
  EXPECT_EQ(first[3], 1.6015625f);
  // The last tensor's data ends the file.
  EXPECT_EQ(f.data_offset() + norm.offset + norm.bytes, f.file_size());
  EXPECT_EQ(f.find_tensor("output.weight"), nullptr);  // tied to token_embd
}

}  // namespace
}  // namespace cocktail::models
