#include "cocktail/models/bert_config.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cocktail/error.hpp"

namespace cocktail::models {
namespace {

using nlohmann::json;

// One JSON file and the checked reads of its fields.
class ConfigFile {
 public:
  explicit ConfigFile(std::filesystem::path path) : path_(std::move(path)) {
    std::ifstream in(path_);
    if (!in) throw Error(fmt::format("{}: cannot open", path_.string()));
    try {
      root_ = json::parse(in);
    } catch (const json::exception& e) {
      fail(fmt::format("not valid JSON: {}", e.what()));
    }
    if (!root_.is_object()) fail("not a JSON object");
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}: {}", path_.string(), what));
  }

  int integer(const char* key, int min, int max) const {
    const json& v = field(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < min || v.get<std::int64_t>() > max) {
      fail(fmt::format("{} = {}; allowed: an integer from {} to {}", key, v.dump(), min, max));
    }
    return v.get<int>();
  }

  double number(const char* key, double min, double max) const {
    const json& v = field(key);
    if (!v.is_number() || !(v.get<double>() >= min && v.get<double>() <= max)) {
      fail(fmt::format("{} = {}; allowed: a number from {} to {}", key, v.dump(), min, max));
    }
    return v.get<double>();
  }

  // A string field that must equal `expected` (or be absent, when it has a default).
  void expect(const char* key, const char* expected, bool required) const {
    if (!required && !root_.contains(key)) return;
    const json& v = field(key);
    if (!v.is_string() || v.get<std::string>() != expected) {
      fail(fmt::format("{} = {}; only \"{}\" is supported", key, v.dump(), expected));
    }
  }

 private:
  const json& field(const char* key) const {
    const auto it = root_.find(key);
    if (it == root_.end()) fail(fmt::format("{} is missing", key));
    return *it;
  }

  std::filesystem::path path_;
  json root_;
};

}  // namespace

BertConfig BertConfig::from_folder(const std::filesystem::path& dir) {
  const ConfigFile config(dir / "config.json");
  config.expect("model_type", "bert", true);
  config.expect("hidden_act", "gelu", true);
  config.expect("position_embedding_type", "absolute", false);
  BertConfig c;
  c.vocab_size = config.integer("vocab_size", 3, 1 << 24);
  c.hidden_size = config.integer("hidden_size", 1, 1 << 16);
  c.n_layers = config.integer("num_hidden_layers", 1, 1024);
  c.n_heads = config.integer("num_attention_heads", 1, c.hidden_size);
  if (c.hidden_size % c.n_heads != 0) {
    config.fail(fmt::format("hidden_size {} is not a multiple of num_attention_heads {}",
                            c.hidden_size, c.n_heads));
  }
  c.intermediate_size = config.integer("intermediate_size", 1, 1 << 18);
  c.max_positions = config.integer("max_position_embeddings", 2, 1 << 20);
  c.type_vocab_size = config.integer("type_vocab_size", 1, 1 << 16);
  c.layer_norm_eps = float(config.number("layer_norm_eps", 1e-30, 1.0));

  const ConfigFile sentence(dir / "sentence_bert_config.json");
  c.max_seq_length = sentence.integer("max_seq_length", 2, c.max_positions);
  return c;
}

}  // namespace cocktail::models
