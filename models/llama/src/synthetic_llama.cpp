#include "cocktail/models/synthetic_llama.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <thread>

#include "cocktail/error.hpp"
#include "cocktail/float16.hpp"
#include "cocktail/models/bpe_tokenizer.hpp"
#include "cocktail/models/model_cache.hpp"
#include "cocktail/models/vocabulary.hpp"

namespace cocktail::models {
namespace {

namespace fs = std::filesystem;

// Written into the file: a change to what is generated must change it, so that files written
// before are not taken for the new model.
constexpr std::uint32_t kRecipe = 1;
constexpr std::uint64_t kSeed = 0x636f636b7461696cULL;  // "cocktail"
constexpr float kRmsEps = 1e-5f;

// Context lengths leave room past 32K tokens of context for the question and the answer.
constexpr std::int64_t kLongContext = 32768 + 4096;

constexpr std::array<SyntheticLlamaShape, 3> kShapes{{
    {.name = "tiny",
     .n_layers = 2,
     .n_embd = 128,
     .n_heads = 2,
     .n_kv_heads = 1,
     .n_ff = 256,
     .n_vocab = 512,
     .context_length = 4096,
     .rope_base = 10000.0f,
     .tied_output = true},
    {.name = "smollm2-135m",
     .n_layers = 30,
     .n_embd = 576,
     .n_heads = 9,
     .n_kv_heads = 3,
     .n_ff = 1536,
     .n_vocab = 49152,
     .context_length = kLongContext,
     .rope_base = 100000.0f,
     .tied_output = true},
    {.name = "llama2-7b",
     .n_layers = 32,
     .n_embd = 4096,
     .n_heads = 32,
     .n_kv_heads = 32,
     .n_ff = 11008,
     .n_vocab = 32000,
     .context_length = kLongContext,
     .rope_base = 10000.0f,
     .tied_output = false},
}};

// splitmix64's finalizer: a bijection of 64-bit words that mixes every input bit into every
// output bit.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// splitmix64: fast, and seeded per row from a hash of (tensor, row), so a row's bytes do not
// depend on which thread writes it.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return mix64(state_ += 0x9e3779b97f4a7c15ULL); }

 private:
  std::uint64_t state_;
};

// A Q4_0 value is d·(q − 8) for a nibble q. Four random bits give q = 8 ± m, m = 0 to 7: codes
// symmetric about zero (uniform nibbles would give q − 8 a mean of −0.5, a bias every row
// would share), with a standard deviation of sqrt(17.5) steps.
constexpr double kCodeStd = 4.1833001326703778;

constexpr unsigned code_of(unsigned bits) {
  const unsigned m = bits & 7;
  return (bits & 8) != 0 ? 8 - m : 8 + m;
}

// A random byte to a byte of two codes: element j in the low nibble, j + 16 in the high one.
constexpr std::array<std::byte, 256> kCodePairs = [] {
  std::array<std::byte, 256> pairs{};
  for (unsigned b = 0; b < 256; ++b) pairs[b] = std::byte(code_of(b & 15) | code_of(b >> 4) << 4);
  return pairs;
}();

constexpr TensorTypeInfo kQ4 = info(TensorType::q4_0);  // an fp16 scale, 16 bytes of codes

// Rows from `first_row` on of a Q4_0 matrix of `cols` columns, every block with the scale
// `scale` (fp16 bits).
void fill_q4_0_rows(std::span<std::byte> out, std::size_t first_row, std::int64_t cols,
                    std::uint16_t scale, std::uint64_t seed) {
  const std::size_t row = row_bytes(TensorType::q4_0, cols);
  for (std::size_t r = 0; r < out.size() / row; ++r) {
    SplitMix64 rng(mix64(seed + first_row + r));
    std::byte* block = out.data() + r * row;
    for (std::int64_t b = 0; b < cols / kQ4.block_elements; ++b, block += kQ4.block_bytes) {
      std::memcpy(block, &scale, sizeof scale);
      for (int half = 0; half < 2; ++half) {
        std::uint64_t bits = rng.next();
        for (int i = 0; i < 8; ++i, bits >>= 8) block[2 + half * 8 + i] = kCodePairs[bits & 0xff];
      }
    }
  }
}

// Threads enough that each writes a few MiB, at most one per core.
std::size_t writers_for(std::size_t bytes) {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<std::size_t>(bytes >> 22, 1, cores);
}

}  // namespace

const SyntheticLlamaShape& synthetic_llama_shape(std::string_view name) {
  for (const SyntheticLlamaShape& shape : kShapes)
    if (shape.name == name) return shape;
  throw Error(fmt::format("no synthetic model shape named '{}'; shapes: {}", name,
                          synthetic_llama_shape_list()));
}

std::string synthetic_llama_shape_list() {
  std::string list;
  for (const SyntheticLlamaShape& shape : kShapes) {
    if (!list.empty()) list += ", ";
    list += fmt::format("{} (context {})", shape.name, shape.context_length);
  }
  return list;
}

SyntheticLlama::SyntheticLlama(const SyntheticLlamaShape& shape) : shape_(shape) {
  add_metadata();
  const SyntheticLlamaShape& s = shape_;
  const int kv = s.n_kv_heads * s.head_dim();
  add_matrix("token_embd.weight", s.n_vocab, s.n_embd);
  add_norm("output_norm.weight");
  if (!s.tied_output) add_matrix("output.weight", s.n_vocab, s.n_embd);
  for (int l = 0; l < s.n_layers; ++l) {
    const std::string p = fmt::format("blk.{}.", l);
    add_norm(p + "attn_norm.weight");
    add_matrix(p + "attn_q.weight", s.n_embd, s.n_embd);
    add_matrix(p + "attn_k.weight", kv, s.n_embd);
    add_matrix(p + "attn_v.weight", kv, s.n_embd);
    add_matrix(p + "attn_output.weight", s.n_embd, s.n_embd);
    add_norm(p + "ffn_norm.weight");
    add_matrix(p + "ffn_gate.weight", s.n_ff, s.n_embd);
    add_matrix(p + "ffn_up.weight", s.n_ff, s.n_embd);
    add_matrix(p + "ffn_down.weight", s.n_embd, s.n_ff);
  }
  file_size_ = writer_.layout().file_size;
}

void SyntheticLlama::add_metadata() {
  const SyntheticLlamaShape& s = shape_;
  using V = GgufWriterValue;
  writer_.add("general.architecture", V::string("llama"))
      .add("general.name", V::string(fmt::format("synthetic {}", s.name)))
      .add("cocktail.synthetic.recipe", V::u32(kRecipe))
      .add("llama.block_count", V::u32(std::uint32_t(s.n_layers)))
      .add("llama.context_length", V::u32(std::uint32_t(s.context_length)))
      .add("llama.embedding_length", V::u32(std::uint32_t(s.n_embd)))
      .add("llama.feed_forward_length", V::u32(std::uint32_t(s.n_ff)))
      .add("llama.attention.head_count", V::u32(std::uint32_t(s.n_heads)))
      .add("llama.attention.head_count_kv", V::u32(std::uint32_t(s.n_kv_heads)))
      .add("llama.rope.dimension_count", V::u32(std::uint32_t(s.head_dim())))
      .add("llama.rope.freq_base", V::f32(s.rope_base))
      .add("llama.attention.layer_norm_rms_epsilon", V::f32(kRmsEps));

  std::vector<std::string> tokens;
  std::vector<std::int32_t> types;
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(byte_level_token(static_cast<unsigned char>(b)));
    types.push_back(std::int32_t(TokenType::normal));
  }
  for (const char* marker : {"<|im_start|>", "<|im_end|>"}) {
    tokens.push_back(marker);
    types.push_back(std::int32_t(TokenType::control));
  }
  const auto end_of_turn = std::uint32_t(tokens.size() - 1);
  while (int(tokens.size()) < s.n_vocab) {
    tokens.push_back(fmt::format("<filler{}>", tokens.size()));
    types.push_back(std::int32_t(TokenType::unused));
  }
  writer_.add("tokenizer.ggml.model", V::string("gpt2"))
      .add("tokenizer.ggml.pre", V::string("smollm"))
      .add("tokenizer.ggml.tokens", V::strings(tokens))
      .add("tokenizer.ggml.token_type", V::i32s(types))
      .add("tokenizer.ggml.merges", V::strings({}))
      .add("tokenizer.ggml.eos_token_id", V::u32(end_of_turn));
}

void SyntheticLlama::add_norm(const std::string& name) {
  writer_.add_tensor(name, TensorType::f32, {shape_.n_embd});
  recipes_.push_back({.norm = true});
}

void SyntheticLlama::add_matrix(const std::string& name, int rows, int cols) {
  writer_.add_tensor(name, TensorType::q4_0, {cols, rows});
  recipes_.push_back({.norm = false, .cols = cols});
}

void SyntheticLlama::fill(std::size_t tensor, std::span<std::byte> out) const {
  const TensorRecipe& recipe = recipes_[tensor];
  if (recipe.norm) {
    const float one = 1.0f;
    for (std::size_t at = 0; at < out.size(); at += sizeof one)
      std::memcpy(out.data() + at, &one, sizeof one);
    return;
  }
  // A standard deviation of 1/sqrt(cols): an output has the RMS of its input, which a norm
  // brings to 1 before every matrix.
  const float spread = 1.0f / std::sqrt(float(recipe.cols));
  const auto scale = std::bit_cast<std::uint16_t>(static_cast<Float16>(spread / kCodeStd));
  const std::uint64_t seed = mix64(kSeed + tensor);
  const std::size_t row = row_bytes(TensorType::q4_0, recipe.cols);
  const std::size_t rows = out.size() / row;
  const std::size_t parts = writers_for(out.size());
  std::vector<std::jthread> writers;
  for (std::size_t p = 0; p < parts; ++p) {
    const std::size_t begin = rows * p / parts, end = rows * (p + 1) / parts;
    writers.emplace_back([=] {
      fill_q4_0_rows(out.subspan(begin * row, (end - begin) * row), begin, recipe.cols, scale,
                     seed);
    });
  }
}

std::string SyntheticLlama::file_name() const {
  return fmt::format("synthetic-{}.gguf", shape_.name);
}

fs::path SyntheticLlama::cached_file() const {
  return model_cache_dir() / file_name();
}

bool SyntheticLlama::matches(const fs::path& file) const {
  std::error_code error;
  if (!fs::is_regular_file(file, error) || fs::file_size(file, error) != file_size_ || error)
    return false;
  const std::vector<std::byte> head = writer_.head();
  std::vector<std::byte> found(head.size());
  std::ifstream in(file, std::ios::binary);
  in.read(reinterpret_cast<char*>(found.data()), std::streamsize(found.size()));
  return in && found == head;
}

void SyntheticLlama::write(const fs::path& file, const GgufWriter::Progress& progress) const {
  std::error_code error;
  if (file.has_parent_path()) fs::create_directories(file.parent_path(), error);
  if (error) {
    throw Error(
        fmt::format("cannot make the folder {}: {}", file.parent_path().string(), error.message()));
  }
  writer_.write(
      file, [this](std::size_t tensor, std::span<std::byte> out) { fill(tensor, out); }, progress);
}

}  // namespace cocktail::models
