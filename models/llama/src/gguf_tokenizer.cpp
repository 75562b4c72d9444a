#include "cocktail/models/gguf_tokenizer.hpp"

#include <fmt/format.h>

#include "cocktail/error.hpp"

namespace cocktail::models {
namespace {

std::optional<TokenId> special_id(const GgufFile& file, const std::string& key) {
  const auto id = file.find_i32(key);
  return id ? std::optional<TokenId>(*id) : std::nullopt;
}

}  // namespace

BpeTokenizer tokenizer_from_gguf(const GgufFile& file) {
  const std::string model = file.get_string("tokenizer.ggml.model");
  if (model != "gpt2") {
    throw Error(
        fmt::format("{}: tokenizer.ggml.model = '{}' is not supported; supported: gpt2 "
                    "(byte-level BPE)",
                    file.path().string(), model));
  }
  Vocabulary v;
  v.tokens = file.get_string_array("tokenizer.ggml.tokens");
  for (const std::int32_t type : file.get_i32_array("tokenizer.ggml.token_type")) {
    v.types.push_back(TokenType(type));
  }
  v.merges = file.get_string_array("tokenizer.ggml.merges");
  v.bos = special_id(file, "tokenizer.ggml.bos_token_id");
  v.eos = special_id(file, "tokenizer.ggml.eos_token_id");
  v.unk = special_id(file, "tokenizer.ggml.unknown_token_id");
  v.pad = special_id(file, "tokenizer.ggml.padding_token_id");
  v.add_bos = file.find_bool("tokenizer.ggml.add_bos_token").value_or(false);
  v.pre_tokenizer = file.find_string("tokenizer.ggml.pre").value_or("default");
  try {
    return BpeTokenizer(std::move(v));
  } catch (const Error& e) {
    throw Error(fmt::format("{}: tokenizer: {}", file.path().string(), e.what()));
  }
}

ChatTemplate chat_template_from_gguf(const GgufFile& file) {
  const auto text = file.find_string("tokenizer.chat_template");
  return text ? ChatTemplate::from_jinja(*text) : ChatTemplate();
}

}  // namespace cocktail::models
