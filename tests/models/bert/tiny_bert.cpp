#include "tiny_bert.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "../safetensors/safetensors_writer.hpp"
#include "cocktail/float16.hpp"

namespace cocktail::testing {
namespace {

using Matrix = std::vector<std::vector<double>>;  // [tokens][features]

// y = x · wᵀ + b, w stored [out][in].
Matrix linear(const Matrix& x, const std::vector<double>& w, const std::vector<double>& b) {
  Matrix y(x.size(), std::vector<double>(b.size()));
  for (std::size_t t = 0; t < x.size(); ++t) {
    for (std::size_t o = 0; o < b.size(); ++o) {
      double sum = b[o];
      for (std::size_t i = 0; i < x[t].size(); ++i) sum += x[t][i] * w[o * x[t].size() + i];
      y[t][o] = sum;
    }
  }
  return y;
}

void layer_norm(Matrix& x, const std::vector<double>& w, const std::vector<double>& b) {
  for (auto& row : x) {
    double mean = 0.0, var = 0.0;
    for (const double v : row) mean += v;
    mean /= double(row.size());
    for (const double v : row) var += (v - mean) * (v - mean);
    const double scale = 1.0 / std::sqrt(var / double(row.size()) + TinyBert::kEps);
    for (std::size_t i = 0; i < row.size(); ++i) row[i] = (row[i] - mean) * scale * w[i] + b[i];
  }
}

void add_rows(Matrix& x, const Matrix& y) {
  for (std::size_t t = 0; t < x.size(); ++t) {
    for (std::size_t i = 0; i < x[t].size(); ++i) x[t][i] += y[t][i];
  }
}

Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v) {
  const int d = TinyBert::kHidden / TinyBert::kHeads;
  Matrix out(q.size(), std::vector<double>(TinyBert::kHidden));
  for (int h = 0; h < TinyBert::kHeads; ++h) {
    for (std::size_t i = 0; i < q.size(); ++i) {
      std::vector<double> p(k.size());
      double max = -INFINITY, sum = 0.0;
      for (std::size_t j = 0; j < k.size(); ++j) {
        double dot = 0.0;
        for (int c = h * d; c < (h + 1) * d; ++c)
          dot += q[i][std::size_t(c)] * k[j][std::size_t(c)];
        p[j] = dot / std::sqrt(double(d));
        max = std::max(max, p[j]);
      }
      for (double& x : p) sum += (x = std::exp(x - max));
      for (int c = h * d; c < (h + 1) * d; ++c) {
        double acc = 0.0;
        for (std::size_t j = 0; j < k.size(); ++j) acc += p[j] * v[j][std::size_t(c)];
        out[i][std::size_t(c)] = acc / sum;
      }
    }
  }
  return out;
}

std::string layer(int l, const std::string& rest) {
  return "encoder.layer." + std::to_string(l) + "." + rest;
}

}  // namespace

TinyBert::TinyBert(unsigned seed) : seed_(seed) {
  add("embeddings.word_embeddings.weight", {kVocab, kHidden}, 1.0, 0.0);
  add("embeddings.position_embeddings.weight", {kPositions, kHidden}, 0.5, 0.0);
  add("embeddings.token_type_embeddings.weight", {kTypes, kHidden}, 0.5, 0.0);
  add("embeddings.LayerNorm.weight", {kHidden}, 0.2, 1.0);
  add("embeddings.LayerNorm.bias", {kHidden}, 0.2, 0.0);
  for (int l = 0; l < kLayers; ++l) {
    for (const char* m : {"attention.self.query", "attention.self.key", "attention.self.value",
                          "attention.output.dense"}) {
      add(layer(l, m) + ".weight", {kHidden, kHidden}, 0.6, 0.0);
      add(layer(l, m) + ".bias", {kHidden}, 0.2, 0.0);
    }
    add(layer(l, "intermediate.dense.weight"), {kIntermediate, kHidden}, 0.6, 0.0, true);
    add(layer(l, "intermediate.dense.bias"), {kIntermediate}, 0.2, 0.0);
    add(layer(l, "output.dense.weight"), {kHidden, kIntermediate}, 0.4, 0.0);
    add(layer(l, "output.dense.bias"), {kHidden}, 0.2, 0.0);
    for (const char* norm : {"attention.output.LayerNorm", "output.LayerNorm"}) {
      add(layer(l, norm) + ".weight", {kHidden}, 0.2, 1.0);
      add(layer(l, norm) + ".bias", {kHidden}, 0.2, 0.0);
    }
  }
}

void TinyBert::add(const std::string& name, std::vector<std::int64_t> shape, double scale,
                   double offset, bool half) {
  std::mt19937 rng(seed_ + unsigned(tensors_.size()));
  std::uniform_real_distribution<double> dist(-scale, scale);
  std::size_t count = 1;
  for (const std::int64_t d : shape) count *= std::size_t(d);
  Tensor t{std::move(shape), std::vector<double>(count), half};
  for (double& v : t.values) {
    v = offset + dist(rng);
    v = half ? double(static_cast<Float16>(v)) : double(float(v));
  }
  tensors_.emplace(name, std::move(t));
}

std::filesystem::path TinyBert::write(const TempDir& dir,
                                      const std::map<std::string, std::string>& config_edits,
                                      const std::string& skip_tensor) const {
  nlohmann::json config = {{"architectures", {"BertModel"}},
                           {"model_type", "bert"},
                           {"hidden_act", "gelu"},
                           {"hidden_size", kHidden},
                           {"intermediate_size", kIntermediate},
                           {"layer_norm_eps", kEps},
                           {"max_position_embeddings", kPositions},
                           {"num_attention_heads", kHeads},
                           {"num_hidden_layers", kLayers},
                           {"position_embedding_type", "absolute"},
                           {"type_vocab_size", kTypes},
                           {"vocab_size", kVocab}};
  for (const auto& [key, value] : config_edits) config[key] = nlohmann::json::parse(value);
  const std::string config_text = config.dump(2);
  dir.write("config.json", std::as_bytes(std::span(config_text)));
  const std::string sentence = R"({"max_seq_length": )" + std::to_string(kMaxSeq) + "}";
  dir.write("sentence_bert_config.json", std::as_bytes(std::span(sentence)));
  std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  for (int i = 5; i < kVocab; ++i) vocab += "w" + std::to_string(i) + "\n";
  dir.write("vocab.txt", std::as_bytes(std::span(vocab)));

  std::vector<SafetensorsEntry> entries;
  for (const auto& [name, t] : tensors_) {
    if (name == skip_tensor) continue;
    Bytes data;
    if (t.half) {
      for (const double v : t.values) {
        const auto h = static_cast<Float16>(v);
        const auto* p = reinterpret_cast<const std::byte*>(&h);
        data.insert(data.end(), p, p + 2);
      }
    } else {
      std::vector<float> f(t.values.begin(), t.values.end());
      data = f32_bytes(f);
    }
    entries.push_back({name, t.half ? "F16" : "F32", t.shape, std::move(data)});
  }
  // Unused tensors of real checkpoints are ignored.
  entries.push_back({"embeddings.position_ids", "I64", {1, kPositions}, Bytes(8 * kPositions)});
  const Bytes file = safetensors_file(entries, {{"format", "pt"}});
  dir.write("model.safetensors", file);
  return dir.path();
}

std::vector<double> TinyBert::reference_embedding(const std::vector<std::int32_t>& ids) const {
  Matrix x(ids.size(), std::vector<double>(kHidden));
  const auto& word = at("embeddings.word_embeddings.weight").values;
  const auto& pos = at("embeddings.position_embeddings.weight").values;
  const auto& type = at("embeddings.token_type_embeddings.weight").values;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    for (std::size_t i = 0; i < kHidden; ++i) {
      x[t][i] = word[std::size_t(ids[t]) * kHidden + i] + pos[t * kHidden + i] + type[i];
    }
  }
  layer_norm(x, at("embeddings.LayerNorm.weight").values, at("embeddings.LayerNorm.bias").values);
  const auto lin = [&](const Matrix& in, const std::string& name) {
    return linear(in, at(name + ".weight").values, at(name + ".bias").values);
  };
  for (int l = 0; l < kLayers; ++l) {
    Matrix a = lin(
        attention(lin(x, layer(l, "attention.self.query")), lin(x, layer(l, "attention.self.key")),
                  lin(x, layer(l, "attention.self.value"))),
        layer(l, "attention.output.dense"));
    add_rows(a, x);
    layer_norm(a, at(layer(l, "attention.output.LayerNorm.weight")).values,
               at(layer(l, "attention.output.LayerNorm.bias")).values);
    Matrix h = lin(a, layer(l, "intermediate.dense"));
    for (auto& row : h) {
      for (double& v : row) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    }
    x = lin(h, layer(l, "output.dense"));
    add_rows(x, a);
    layer_norm(x, at(layer(l, "output.LayerNorm.weight")).values,
               at(layer(l, "output.LayerNorm.bias")).values);
  }
  std::vector<double> mean(kHidden, 0.0);
  for (const auto& row : x) {
    for (std::size_t i = 0; i < kHidden; ++i) mean[i] += row[i] / double(x.size());
  }
  double norm = 0.0;
  for (const double v : mean) norm += v * v;
  for (double& v : mean) v /= std::sqrt(norm);
  return mean;
}

}  // namespace cocktail::testing
