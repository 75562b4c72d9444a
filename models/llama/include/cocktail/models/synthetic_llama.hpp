#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/models/gguf_writer.hpp"

namespace cocktail::models {

// The shape of a Llama-family decoder, for a synthetic model: random weights at a real model's
// sizes, to measure decoding where the real weights cannot go (a machine without network, or
// one that takes only small uploads).
struct SyntheticLlamaShape {
  std::string_view name;
  int n_layers = 0;
  int n_embd = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int n_ff = 0;
  int n_vocab = 0;
  std::int64_t context_length = 0;
  float rope_base = 10000.0f;
  bool tied_output = true;  // the output matrix is the token embedding

  int head_dim() const { return n_embd / n_heads; }
};

// The shape named `name`: tiny (for tests), smollm2-135m or llama2-7b. Throws Error naming it
// and the shapes there are.
const SyntheticLlamaShape& synthetic_llama_shape(std::string_view name);
// "tiny (context 4096), smollm2-135m (context 36864), ...", for messages.
std::string synthetic_llama_shape_list();

// A synthetic Llama model as a GGUF file that LlamaModel reads like any other:
// - every matrix Q4_0 (the token embedding and the output matrix too), with codes spread evenly
//   around zero and one scale per matrix, so that each output has about the RMS of its
//   normalized input (a standard deviation of 1/sqrt(columns)): activations stay finite through
//   any number of layers. Q4_0 is the smallest type the backends read, so the file is written
//   and uploaded fastest (the CPU backend reads it in place, a GPU backend converts it);
// - norm weights of 1, in f32;
// - a byte-level tokenizer: the 256 byte tokens, <|im_start|> and <|im_end|> for the ChatML
//   template (<|im_end|> ends a turn), and unused filler tokens up to the shape's vocabulary,
//   so that any text encodes, one token per byte.
// The weights are a fixed function of the shape: the same file every time, on any machine, made
// with every core.
class SyntheticLlama {
 public:
  explicit SyntheticLlama(const SyntheticLlamaShape& shape);

  const SyntheticLlamaShape& shape() const { return shape_; }
  std::string file_name() const;  // "synthetic-smollm2-135m.gguf"
  // Where it is kept: file_name() in the model cache folder ($COCKTAIL_MODEL_DIR, else
  // ~/.cache/cocktail/models).
  std::filesystem::path cached_file() const;
  std::uint64_t file_size() const { return file_size_; }

  // Whether `file` is this model: the same size, and the same header, metadata (the version of
  // this recipe among them) and tensor infos. The weights are not read back: write() only ever
  // renames a complete file into place.
  bool matches(const std::filesystem::path& file) const;
  // Writes the model to `file`, making its folder if need be. Throws Error naming the path when
  // it cannot.
  void write(const std::filesystem::path& file, const GgufWriter::Progress& progress = {}) const;

 private:
  // What fills one tensor: norm weights of 1, or a Q4_0 matrix of `cols` columns.
  struct TensorRecipe {
    bool norm = false;
    std::int64_t cols = 0;
  };

  void add_metadata();
  void add_norm(const std::string& name);
  void add_matrix(const std::string& name, int rows, int cols);
  void fill(std::size_t tensor, std::span<std::byte> out) const;

  SyntheticLlamaShape shape_;
  GgufWriter writer_;
  std::vector<TensorRecipe> recipes_;  // one per tensor of writer_
  std::uint64_t file_size_ = 0;
};

}  // namespace cocktail::models
