#pragma once

#include "cocktail/models/bpe_tokenizer.hpp"
#include "cocktail/models/chat_template.hpp"
#include "cocktail/models/gguf_file.hpp"

namespace cocktail::models {

// The tokenizer a GGUF file describes (tokenizer.ggml.*). Only byte-level BPE
// (tokenizer.ggml.model = "gpt2") is supported; another model is an Error naming it.
BpeTokenizer tokenizer_from_gguf(const GgufFile& file);

// The file's chat template (tokenizer.chat_template); plain ChatML when it has none.
ChatTemplate chat_template_from_gguf(const GgufFile& file);

}  // namespace cocktail::models
