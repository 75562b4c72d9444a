#include "minilm_scorer.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cocktail/error.hpp"
#include "cocktail/models/model_cache.hpp"

namespace cocktail::scorers {
namespace {

// The model folder model_dir names, checked to exist.
std::filesystem::path model_folder(Options& opts) {
  const std::filesystem::path dir =
      opts.get_string("model_dir", MiniLmScorer::default_model_dir().string());
  std::error_code error;
  if (!std::filesystem::is_regular_file(dir / "model.safetensors", error)) {
    throw Error(
        fmt::format("minilm scorer: no model in {}; run scripts/fetch-models to download "
                    "all-MiniLM-L6-v2, or set [scorer.minilm] model_dir",
                    dir.string()));
  }
  return dir;
}

// The most tokens a chunk is read with: what the model was trained on, 256 at most.
std::int64_t max_seq_tokens(const models::BertModel& model) {
  return std::min(model.config().max_seq_length, 256);
}

}  // namespace

std::filesystem::path MiniLmScorer::default_model_dir() {
  return models::model_cache_dir() / "all-MiniLM-L6-v2";
}

MiniLmScorer::MiniLmScorer(Options& opts)
    : model_(model_folder(opts)),
      batch_tokens_(opts.get_int("batch_tokens", 2048, 1, 1 << 20)),
      max_seq_tokens_(std::size_t(
          opts.get_int("max_seq_tokens", max_seq_tokens(model_), 2, max_seq_tokens(model_)))) {}

void MiniLmScorer::use_backend(std::shared_ptr<Backend> backend) {
  encoder_.reset();
  if (backend) encoder_.emplace(model_, std::move(backend), batch_tokens_);
}

std::vector<double> MiniLmScorer::score(const ScoringInput& input) {
  if (!encoder_) {
    throw Error(
        "minilm scorer: no backend to run the encoder on; the host must call use_backend() "
        "before score()");
  }
  if (input.chunk_texts.empty()) return {};
  const models::WordPieceTokenizer& tokenizer = model_.tokenizer();
  std::vector<std::vector<std::int32_t>> sequences;
  sequences.reserve(input.chunk_texts.size() + 1);
  sequences.push_back(tokenizer.encode(input.query, max_seq_tokens_));
  for (const std::string& text : input.chunk_texts) {
    sequences.push_back(tokenizer.encode(text, max_seq_tokens_));
  }
  const std::vector<float> embeddings = encoder_->embed(sequences);
  const auto h = std::size_t(model_.config().hidden_size);
  std::vector<double> scores(input.chunk_texts.size());
  for (std::size_t c = 0; c < scores.size(); ++c) {
    double dot = 0.0;
    for (std::size_t i = 0; i < h; ++i) dot += double(embeddings[i]) * embeddings[(c + 1) * h + i];
    scores[c] = dot;
  }
  return scores;
}

}  // namespace cocktail::scorers
