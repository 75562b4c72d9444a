#include "cocktail/models/bert_model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

#include "cocktail/dequantize.hpp"
#include "cocktail/error.hpp"

namespace cocktail::models {
namespace {

// A float tensor of the given shape, and its type.
std::pair<const SafetensorsTensor&, TensorType> shaped(const SafetensorsFile& file,
                                                       const std::string& name,
                                                       const std::vector<std::int64_t>& shape) {
  const SafetensorsTensor& t = file.tensor(name);
  if (t.shape != shape) {
    throw Error(fmt::format("{}: tensor '{}' has shape [{}]; expected [{}]", file.path().string(),
                            name, fmt::join(t.shape, ", "), fmt::join(shape, ", ")));
  }
  const std::optional<TensorType> type = t.float_type();
  if (!type) {
    throw Error(fmt::format("{}: tensor '{}' has dtype {}; expected F32, F16 or BF16",
                            file.path().string(), name, t.dtype));
  }
  return {t, *type};
}

WeightView matrix(const SafetensorsFile& file, const std::string& name, int rows, int cols) {
  const auto [t, type] = shaped(file, name, {rows, cols});
  return {type, t.data.data(), rows, cols};
}

std::vector<float> vector_of(const SafetensorsFile& file, const std::string& name, int n) {
  const auto [t, type] = shaped(file, name, {n});
  std::vector<float> out(static_cast<std::size_t>(n));
  dequantize_row(type, t.data.data(), n, out.data());
  return out;
}

Linear linear(const SafetensorsFile& file, const std::string& prefix, int out, int in) {
  return {matrix(file, prefix + ".weight", out, in), vector_of(file, prefix + ".bias", out)};
}

LayerNormWeights layer_norm(const SafetensorsFile& file, const std::string& prefix, int n) {
  return {vector_of(file, prefix + ".weight", n), vector_of(file, prefix + ".bias", n)};
}

}  // namespace

BertModel::BertModel(const std::filesystem::path& dir)
    : config_(BertConfig::from_folder(dir)),
      tokenizer_(WordPieceTokenizer::from_file(dir / "vocab.txt")),
      file_(dir / "model.safetensors") {
  const BertConfig& c = config_;
  if (tokenizer_.size() != std::size_t(c.vocab_size)) {
    throw Error(fmt::format("{}: {} tokens, but config.json has vocab_size {}",
                            (dir / "vocab.txt").string(), tokenizer_.size(), c.vocab_size));
  }
  const int h = c.hidden_size;
  word_embeddings_ = matrix(file_, "embeddings.word_embeddings.weight", c.vocab_size, h);
  position_embeddings_ = matrix(file_, "embeddings.position_embeddings.weight", c.max_positions, h);
  token_type_embeddings_ =
      matrix(file_, "embeddings.token_type_embeddings.weight", c.type_vocab_size, h);
  embedding_norm_ = layer_norm(file_, "embeddings.LayerNorm", h);
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = fmt::format("encoder.layer.{}.", l);
    BertLayer layer;
    layer.query = linear(file_, p + "attention.self.query", h, h);
    layer.key = linear(file_, p + "attention.self.key", h, h);
    layer.value = linear(file_, p + "attention.self.value", h, h);
    layer.attention_output = linear(file_, p + "attention.output.dense", h, h);
    layer.attention_norm = layer_norm(file_, p + "attention.output.LayerNorm", h);
    layer.intermediate = linear(file_, p + "intermediate.dense", c.intermediate_size, h);
    layer.output = linear(file_, p + "output.dense", h, c.intermediate_size);
    layer.output_norm = layer_norm(file_, p + "output.LayerNorm", h);
    layers_.push_back(std::move(layer));
  }
}

}  // namespace cocktail::models
