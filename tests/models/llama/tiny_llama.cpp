#include "tiny_llama.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "cocktail/float16.hpp"

namespace cocktail::testing {
namespace {

// ggml type ids of the block formats written here.
constexpr std::uint32_t kTypeF32 = 0, kTypeF16 = 1, kTypeQ8_0 = 8;

void put_half(Bytes& out, float x) {
  const auto h = static_cast<Float16>(x);
  std::uint16_t bits;
  std::memcpy(&bits, &h, 2);
  out.push_back(std::byte(bits & 0xFF));
  out.push_back(std::byte(bits >> 8));
}

double half_value(float x) {
  return double(static_cast<float>(static_cast<Float16>(x)));
}

// Encodes one row in `type` and returns the values the encoding decodes to (ggml's formulas:
// Q8_0 x = d·q).
std::vector<double> encode_row(std::uint32_t type, const std::vector<float>& x, Bytes& out) {
  std::vector<double> decoded;
  if (type == kTypeF32) {
    for (float v : x) {
      const auto* b = reinterpret_cast<const std::byte*>(&v);
      out.insert(out.end(), b, b + 4);
      decoded.push_back(v);
    }
    return decoded;
  }
  if (type == kTypeF16) {
    for (float v : x) {
      put_half(out, v);
      decoded.push_back(half_value(v));
    }
    return decoded;
  }
  for (std::size_t b = 0; b < x.size(); b += 32) {  // Q8_0
    const auto first = x.begin() + long(b);
    const auto [lo, hi] = std::minmax_element(first, first + 32);
    const float amax = std::max(std::fabs(*lo), std::fabs(*hi));
    const double d = half_value(amax / 127.0f);
    put_half(out, float(d));
    for (int i = 0; i < 32; ++i) {
      const int q = int(std::lround(x[b + std::size_t(i)] / d));
      out.push_back(std::byte(std::int8_t(q)));
      decoded.push_back(d * q);
    }
  }
  return decoded;
}

class Builder {
 public:
  Builder(GgufWriter& writer, unsigned seed) : writer_(writer), rng_(seed) {}

  TinyLlama::Matrix matrix(const std::string& name, std::uint32_t type, int rows, int cols,
                           float spread) {
    TinyLlama::Matrix m{rows, cols, {}};
    TestTensor t{name, type, {std::uint64_t(cols), std::uint64_t(rows)}, {}};
    std::normal_distribution<float> normal(0.0f, spread);
    for (int r = 0; r < rows; ++r) {
      std::vector<float> row(static_cast<std::size_t>(cols));
      for (float& v : row) v = normal(rng_);
      const std::vector<double> decoded = encode_row(type, row, t.data);
      m.w.insert(m.w.end(), decoded.begin(), decoded.end());
    }
    writer_.add_tensor(std::move(t));
    return m;
  }

  // A vector of n floats drawn from [low, high).
  std::vector<double> vector(const std::string& name, int n, float low, float high) {
    TestTensor t{name, kTypeF32, {std::uint64_t(n)}, {}};
    std::uniform_real_distribution<float> value(low, high);
    std::vector<float> w(static_cast<std::size_t>(n));
    for (float& v : w) v = value(rng_);
    const std::vector<double> decoded = encode_row(kTypeF32, w, t.data);
    writer_.add_tensor(std::move(t));
    return decoded;
  }

  std::vector<double> norm(const std::string& name, int n) { return vector(name, n, 0.5f, 1.5f); }

 private:
  GgufWriter& writer_;
  std::mt19937 rng_;
};

using Vec = std::vector<double>;

Vec matvec(const TinyLlama::Matrix& m, const Vec& x) {
  Vec y(static_cast<std::size_t>(m.rows), 0.0);
  for (int r = 0; r < m.rows; ++r) {
    for (int c = 0; c < m.cols; ++c)
      y[std::size_t(r)] += m.w[std::size_t(r * m.cols + c)] * x[std::size_t(c)];
  }
  return y;
}

Vec rms_norm(const Vec& x, const Vec& w) {
  double ss = 0.0;
  for (double v : x) ss += v * v;
  const double inv = 1.0 / std::sqrt(ss / double(x.size()) + TinyLlama::kEps);
  Vec y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * w[i];
  return y;
}

// Pairs rotate by pos · base^(-2i/d), head by head: adjacent ones, or with `halves` (NeoX)
// element i with element i + d/2.
void rope(Vec& x, int heads, int pos, bool halves) {
  const int d = TinyLlama::kHeadDim;
  for (int h = 0; h < heads; ++h) {
    for (int i = 0; i < d / 2; ++i) {
      const double theta = pos * std::pow(double(TinyLlama::kRopeBase), -2.0 * i / d);
      double& a = x[std::size_t(h * d + (halves ? i : 2 * i))];
      double& b = x[std::size_t(h * d + (halves ? i + d / 2 : 2 * i + 1))];
      const double a0 = a, b0 = b;
      a = a0 * std::cos(theta) - b0 * std::sin(theta);
      b = a0 * std::sin(theta) + b0 * std::cos(theta);
    }
  }
}

void add(Vec& x, const Vec& bias) {
  for (std::size_t i = 0; i < bias.size(); ++i) x[i] += bias[i];
}

}  // namespace

std::filesystem::path TinyLlama::write(const TempDir& dir, unsigned seed) {
  const bool qwen2 = architecture == "qwen2";
  const std::string a = architecture + ".";
  GgufWriter w;
  w.add("general.architecture", TestValue::string(architecture))
      .add(a + "block_count", TestValue::u32(kLayers))
      .add(a + "context_length", TestValue::u32(kContext))
      .add(a + "embedding_length", TestValue::u32(kEmbd))
      .add(a + "feed_forward_length", TestValue::u32(kFf))
      .add(a + "attention.head_count", TestValue::u32(kHeads))
      .add(a + "attention.head_count_kv", TestValue::u32(kKvHeads))
      .add(a + "rope.freq_base", TestValue::f32(kRopeBase))
      .add(a + "attention.layer_norm_rms_epsilon", TestValue::f32(kEps))
      .add("tokenizer.ggml.model", TestValue::string("gpt2"))
      .add("tokenizer.ggml.pre", TestValue::string(qwen2 ? "qwen2" : "smollm"));
  for (const auto& [key, value] : extra_metadata) w.add(key, value);
  // 38 one-letter tokens and the two ChatML markers.
  std::vector<std::string> tokens;
  std::vector<TestValue> types;
  for (int i = 0; i < kVocab - 2; ++i) {
    tokens.push_back(std::string(1, char('A' + i)));
    types.push_back(TestValue::i32(1));
  }
  for (const char* special : {"<|im_start|>", "<|im_end|>"}) {
    tokens.push_back(special);
    types.push_back(TestValue::i32(3));
  }
  w.add("tokenizer.ggml.tokens", TestValue::strings(tokens))
      .add("tokenizer.ggml.token_type", TestValue::array(kI32, types))
      .add("tokenizer.ggml.merges", TestValue::strings({}))
      .add("tokenizer.ggml.eos_token_id", TestValue::u32(kVocab - 1));

  Builder b(w, seed);
  embd = b.matrix("token_embd.weight", kTypeQ8_0, kVocab, kEmbd, 1.0f);
  out_norm = b.norm("output_norm.weight", kEmbd);
  const int kv = kKvHeads * kHeadDim;
  const float s = 1.0f / std::sqrt(float(kEmbd));
  layers.clear();
  for (int l = 0; l < kLayers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    Layer layer;
    layer.attn_norm = b.norm(p + "attn_norm.weight", kEmbd);
    layer.ffn_norm = b.norm(p + "ffn_norm.weight", kEmbd);
    if (qwen2) {  // key biases larger than the keys, as Qwen2's are
      layer.q_bias = b.vector(p + "attn_q.bias", kEmbd, -1.0f, 1.0f);
      layer.k_bias = b.vector(p + "attn_k.bias", kv, -3.0f, 3.0f);
      layer.v_bias = b.vector(p + "attn_v.bias", kv, -0.5f, 0.5f);
    }
    // Float formats only: a backend may quantize activations for quantized matmuls (as
    // llama.cpp does), which the real-model fixture test covers; the decoder logic is checked
    // here at float precision. The Q8_0 embedding is a lookup, exact either way.
    layer.q = b.matrix(p + "attn_q.weight", kTypeF32, kEmbd, kEmbd, 2 * s);
    layer.k = b.matrix(p + "attn_k.weight", kTypeF16, kv, kEmbd, 2 * s);
    layer.v = b.matrix(p + "attn_v.weight", kTypeF16, kv, kEmbd, s);
    layer.o = b.matrix(p + "attn_output.weight", kTypeF32, kEmbd, kEmbd, s);
    layer.gate = b.matrix(p + "ffn_gate.weight", kTypeF16, kFf, kEmbd, s);
    layer.up = b.matrix(p + "ffn_up.weight", kTypeF32, kFf, kEmbd, s);
    layer.down =
        b.matrix(p + "ffn_down.weight", kTypeF16, kEmbd, kFf, 1.0f / std::sqrt(float(kFf)));
    layers.push_back(std::move(layer));
  }
  const Bytes bytes = w.bytes();
  return dir.write("tiny-llama.gguf", bytes);
}

std::vector<double> TinyLlama::reference_logits(const std::vector<std::int32_t>& tokens) const {
  const bool qwen2 = architecture == "qwen2";
  const int n = int(tokens.size());
  const int group = kHeads / kKvHeads;
  std::vector<Vec> x(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) {
    const auto row = embd.w.begin() + long(tokens[std::size_t(t)]) * kEmbd;
    x[std::size_t(t)] = Vec(row, row + kEmbd);
  }
  for (const Layer& layer : layers) {
    std::vector<Vec> q(static_cast<std::size_t>(n)), k(static_cast<std::size_t>(n)),
        v(static_cast<std::size_t>(n));
    for (int t = 0; t < n; ++t) {
      const Vec h = rms_norm(x[std::size_t(t)], layer.attn_norm);
      q[std::size_t(t)] = matvec(layer.q, h);
      k[std::size_t(t)] = matvec(layer.k, h);
      v[std::size_t(t)] = matvec(layer.v, h);
      add(q[std::size_t(t)], layer.q_bias);
      add(k[std::size_t(t)], layer.k_bias);
      add(v[std::size_t(t)], layer.v_bias);
      rope(q[std::size_t(t)], kHeads, t, qwen2);
      rope(k[std::size_t(t)], kKvHeads, t, qwen2);
      for (double& e : k[std::size_t(t)]) e = half_value(float(e));
      for (double& e : v[std::size_t(t)]) e = half_value(float(e));
    }
    for (int t = 0; t < n; ++t) {
      Vec attn(static_cast<std::size_t>(kEmbd), 0.0);
      for (int h = 0; h < kHeads; ++h) {
        const int kvh = h / group;
        std::vector<double> p(static_cast<std::size_t>(t + 1));
        double m = -1e300;
        for (int j = 0; j <= t; ++j) {
          double dot = 0.0;
          for (int d = 0; d < kHeadDim; ++d) {
            dot += q[std::size_t(t)][std::size_t(h * kHeadDim + d)] *
                   k[std::size_t(j)][std::size_t(kvh * kHeadDim + d)];
          }
          p[std::size_t(j)] = dot / std::sqrt(double(kHeadDim));
          m = std::max(m, p[std::size_t(j)]);
        }
        double sum = 0.0;
        for (double& e : p) sum += (e = std::exp(e - m));
        for (int j = 0; j <= t; ++j) {
          for (int d = 0; d < kHeadDim; ++d) {
            attn[std::size_t(h * kHeadDim + d)] +=
                p[std::size_t(j)] / sum * v[std::size_t(j)][std::size_t(kvh * kHeadDim + d)];
          }
        }
      }
      const Vec o = matvec(layer.o, attn);
      for (int i = 0; i < kEmbd; ++i) x[std::size_t(t)][std::size_t(i)] += o[std::size_t(i)];
    }
    for (int t = 0; t < n; ++t) {
      const Vec h = rms_norm(x[std::size_t(t)], layer.ffn_norm);
      Vec g = matvec(layer.gate, h);
      const Vec u = matvec(layer.up, h);
      for (std::size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
      const Vec d = matvec(layer.down, g);
      for (int i = 0; i < kEmbd; ++i) x[std::size_t(t)][std::size_t(i)] += d[std::size_t(i)];
    }
  }
  return matvec(embd, rms_norm(x.back(), out_norm));
}

}  // namespace cocktail::testing
