#pragma once

#include <filesystem>

namespace cocktail::models {

// The hyper-parameters of a BERT encoder in a sentence-transformers folder: config.json (the
// Hugging Face BertModel config) and sentence_bert_config.json (max_seq_length).
struct BertConfig {
  int vocab_size = 0;
  int hidden_size = 0;
  int n_layers = 0;
  int n_heads = 0;
  int intermediate_size = 0;
  int max_positions = 0;    // max_position_embeddings
  int type_vocab_size = 0;  // segment embeddings
  float layer_norm_eps = 0.0f;
  int max_seq_length = 0;  // tokens the sentence encoder reads, [CLS] and [SEP] included

  int head_dim() const { return hidden_size / n_heads; }

  // Reads and checks both files of `dir`; throws cocktail::Error naming the file, the field
  // and what is allowed (only model_type "bert" with hidden_act "gelu", the erf form, and
  // absolute positions are supported).
  static BertConfig from_folder(const std::filesystem::path& dir);
};

}  // namespace cocktail::models
