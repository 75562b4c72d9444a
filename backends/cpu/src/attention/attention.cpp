#include "attention/attention.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attention/prefill_kernels.hpp"
#include "attention/tile_kernels.hpp"
#include "cocktail/attention_checks.hpp"
#include "cocktail/error.hpp"
#include "kv_store.hpp"
#include "memory/cpu_buffer.hpp"
#include "quant/half_convert.hpp"

namespace cocktail::cpu {

namespace {

const CpuKvStore& cpu_store(const KvStore& store) {
  const auto* cpu = dynamic_cast<const CpuKvStore*>(&store);
  if (!cpu) throw Error("CPU attention needs a KV store made by the CPU backend");
  return *cpu;
}

void check_query(const CpuKvStore& store, int layer, std::size_t q_size, std::size_t out_size,
                 std::int64_t n_rows, int n_q_heads) {
  const KvShape& shape = store.options().shape;
  store.check_layer(layer);
  check_query_heads("attention", shape, n_q_heads);
  const std::size_t expected =
      std::size_t(n_rows) * std::size_t(n_q_heads) * std::size_t(shape.head_dim);
  if (q_size != expected || out_size != expected) {
    throw Error("attention: q and out need " + std::to_string(expected) + " floats, got " +
                std::to_string(q_size) + " and " + std::to_string(out_size));
  }
}

// Merges partial states by log-sum-exp (paper Algorithm 1) and normalises into `out`.
void merge_into(const std::vector<Partial>& parts, int heads, int dim, float* out) {
  for (int h = 0; h < heads; ++h) {
    float m = -std::numeric_limits<float>::infinity();
    for (const Partial& p : parts) m = std::max(m, p.m[std::size_t(h)]);
    float l = 0.0f;
    float* o = out + std::size_t(h) * std::size_t(dim);
    std::fill(o, o + dim, 0.0f);
    for (const Partial& p : parts) {
      if (p.l[std::size_t(h)] == 0.0f) continue;
      const float w = std::exp(p.m[std::size_t(h)] - m);
      l += p.l[std::size_t(h)] * w;
      const float* po = p.o.data() + std::size_t(h) * std::size_t(dim);
      for (int d = 0; d < dim; ++d) o[d] += po[d] * w;
    }
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    for (int d = 0; d < dim; ++d) o[d] *= inv;
  }
}

// Query tokens per prefill task: enough rows to repay widening each key tile to float.
constexpr std::int64_t kPrefillBlockTokens = 64;

int thread_count(int configured) {
  return configured > 0 ? configured : omp_get_max_threads();
}

// Keys of one head as float, transposed to [head_dim][n]: a query's scores are then head_dim
// unit-stride multiply-adds over the tokens, which the compiler vectorises.
std::vector<float> transposed_keys(const std::uint16_t* keys, std::int64_t n, int dim) {
  std::vector<float> out(std::size_t(n) * std::size_t(dim));
  std::vector<float> row(static_cast<std::size_t>(dim));
  for (std::int64_t t = 0; t < n; ++t) {
    floats_from_halves(std::span(keys + t * dim, std::size_t(dim)), row.data());
    for (int d = 0; d < dim; ++d) out[std::size_t(d) * n + t] = row[std::size_t(d)];
  }
  return out;
}

// Adds the softmax weights of one query over keys [0, visible) to mass.
void add_attention_weights(const float* q, const std::vector<float>& keys_t, std::int64_t n,
                           int dim, std::int64_t visible, std::vector<float>& scores, float* mass) {
  std::fill_n(scores.begin(), visible, 0.0f);
  for (int d = 0; d < dim; ++d) {
    const float qd = q[d];
    const float* row = keys_t.data() + std::size_t(d) * n;
    for (std::int64_t t = 0; t < visible; ++t) scores[t] += qd * row[t];
  }
  const float max = *std::max_element(scores.begin(), scores.begin() + visible);
  float sum = 0.0f;
  for (std::int64_t t = 0; t < visible; ++t) sum += scores[t] = std::exp(scores[t] - max);
  const float inv = 1.0f / sum;
  for (std::int64_t t = 0; t < visible; ++t) mass[t] += scores[t] * inv;
}

}  // namespace

Partial::Partial(int heads, int dim)
    : m(std::size_t(heads), -std::numeric_limits<float>::infinity()),
      l(std::size_t(heads), 0.0f),
      o(std::size_t(heads) * std::size_t(dim), 0.0f) {}

void Partial::reset() {
  std::fill(m.begin(), m.end(), -std::numeric_limits<float>::infinity());
  std::fill(l.begin(), l.end(), 0.0f);
  std::fill(o.begin(), o.end(), 0.0f);
}

CpuDecodePlan::CpuDecodePlan(const CpuKvStore& store, int query_heads, int n_threads)
    : n_q_heads(query_heads),
      threads(n_threads),
      store_(&store),
      layer_tokens_(store.n_tokens()),
      commits_(store.commits()) {
  const KvShape& shape = store.options().shape;
  check_query(store, 0, std::size_t(n_q_heads * shape.head_dim),
              std::size_t(n_q_heads * shape.head_dim), 1, n_q_heads);
  if (layer_tokens_ == 0) throw Error("attention: the KV store is empty");
  const int dim = shape.head_dim;
  const int group = n_q_heads / shape.n_kv_heads;
  const int tile_tokens = store.options().layout.group_size;
  const std::int64_t tail = layer_tokens_ - store.n_committed();
  scaled_q.resize(std::size_t(n_q_heads) * std::size_t(dim));
  views.resize(std::size_t(shape.n_kv_heads));
  for (int h = 0; h < shape.n_kv_heads; ++h) store.view_into(0, h, views[std::size_t(h)]);
  // Split each KV head's tiles into enough ranges to keep every thread busy, but never into
  // ranges so short that merging costs more than it saves.
  const std::int64_t tiles = count_tiles(views[0], tail, tile_tokens);
  const std::int64_t wanted = (2 * std::int64_t(threads) + shape.n_kv_heads - 1) / shape.n_kv_heads;
  const std::int64_t ranges = std::clamp<std::int64_t>(std::min(wanted, tiles / 8), 1, tiles);
  partials.resize(std::size_t(shape.n_kv_heads));
  for (int h = 0; h < shape.n_kv_heads; ++h) {
    partials[std::size_t(h)].assign(std::size_t(ranges), Partial(group, dim));
    for (std::int64_t r = 0; r < ranges; ++r) {
      Partial& p = partials[std::size_t(h)][std::size_t(r)];
      tasks.push_back({&views[std::size_t(h)], scaled_q.data() + std::size_t(h * group * dim),
                       group, dim, tile_tokens, tiles * r / ranges, tiles * (r + 1) / ranges, tail,
                       p.m.data(), p.l.data(), p.o.data()});
    }
  }
}

void CpuDecodePlan::check_fits(const CpuKvStore& store, int layer) const {
  store.check_layer(layer);
  check_decode_plan_fits("attention", &store == store_, store.commits() != commits_, layer_tokens_,
                         layer, store.layer_tokens(layer));
}

void CpuAttention::decode(CpuDecodePlan& plan, const CpuKvStore& store, int layer,
                          std::span<const float> q, float softmax_scale,
                          std::span<float> out) const {
  plan.check_fits(store, layer);
  check_query(store, layer, q.size(), out.size(), 1, plan.n_q_heads);
  const KvShape& shape = store.options().shape;
  const int dim = shape.head_dim;
  const int group = plan.n_q_heads / shape.n_kv_heads;
  // The plan's buffers are refilled, never resized: a layer's run allocates nothing.
  std::transform(q.begin(), q.end(), plan.scaled_q.begin(),
                 [softmax_scale](float x) { return x * softmax_scale; });
  for (int h = 0; h < shape.n_kv_heads; ++h) {
    store.view_into(layer, h, plan.views[std::size_t(h)]);
    for (Partial& p : plan.partials[std::size_t(h)]) p.reset();
  }
  // Equal ranges, dealt in order: each thread reads the same tiles at every step, which stay in
  // its L2 when the cache fits.
  const std::vector<RangeTask>& tasks = plan.tasks;
#pragma omp parallel for schedule(static) num_threads(plan.threads)
  for (std::size_t i = 0; i < tasks.size(); ++i) attend_range(tasks[i]);

  for (int h = 0; h < shape.n_kv_heads; ++h) {
    merge_into(plan.partials[std::size_t(h)], group, dim,
               out.data() + std::size_t(h * group * dim));
  }
}

void CpuAttention::decode(const CpuKvStore& store, int layer, std::span<const float> q,
                          int n_q_heads, float softmax_scale, std::span<float> out) const {
  CpuDecodePlan plan(store, n_q_heads, thread_count(threads_));
  decode(plan, store, layer, q, softmax_scale, out);
}

void CpuAttention::prefill(const CpuKvStore& store, int layer, std::span<const float> q,
                           std::int64_t n_new, int n_q_heads, float softmax_scale,
                           std::span<float> out) const {
  check_query(store, layer, q.size(), out.size(), n_new, n_q_heads);
  const KvShape& shape = store.options().shape;
  const int dim = shape.head_dim;
  const int group = n_q_heads / shape.n_kv_heads;
  const int tile_tokens = store.options().layout.group_size;
  const std::int64_t tail = store.layer_tokens(layer) - store.n_committed();
  check_prefill_tokens("attention", layer, n_new, tail);
  if (n_new == 0) return;
  std::vector<float> scaled(q.begin(), q.end());
  for (float& x : scaled) x *= softmax_scale;
  std::vector<HeadView> views;
  for (int h = 0; h < shape.n_kv_heads; ++h) views.push_back(store.view(layer, h));

  // Tasks are blocks of query tokens of one KV head; the later blocks see more keys, so they
  // are handed out first.
  const int threads = thread_count(threads_);
  const int block_rows = kPrefillBlockTokens * group;
  std::vector<PrefillScratch> scratch;
  std::vector<Partial> state;
  for (int t = 0; t < threads; ++t) {
    scratch.emplace_back(dim, block_rows);
    state.emplace_back(block_rows, dim);
  }
  const std::int64_t blocks = (n_new + kPrefillBlockTokens - 1) / kPrefillBlockTokens;
  const std::int64_t items = blocks * shape.n_kv_heads;
  const std::int64_t q_stride = std::int64_t(n_q_heads) * dim;
#pragma omp parallel for schedule(dynamic) num_threads(threads)
  for (std::int64_t item = 0; item < items; ++item) {
    const std::int64_t i0 = (blocks - 1 - item / shape.n_kv_heads) * kPrefillBlockTokens;
    const int h = int(item % shape.n_kv_heads);
    const HeadView& view = views[std::size_t(h)];
    Partial& p = state[std::size_t(omp_get_thread_num())];
    PrefillBlock b;
    b.keys = view.tail_keys;
    b.values = view.tail_values;
    b.head_dim = dim;
    b.group = group;
    b.tokens = int(std::min<std::int64_t>(kPrefillBlockTokens, n_new - i0));
    b.q = scaled.data() + i0 * q_stride + std::int64_t(h) * group * dim;
    b.q_token_stride = q_stride;
    b.first_visible = tail - n_new + i0 + 1;
    b.m = p.m.data();
    b.l = p.l.data();
    b.o = p.o.data();
    const int rows = b.tokens * group;
    std::fill_n(b.m, rows, -std::numeric_limits<float>::infinity());
    std::fill_n(b.l, rows, 0.0f);
    std::fill_n(b.o, std::int64_t(rows) * dim, 0.0f);
    // Committed segments come before the tail and every query sees all of them.
    const std::int64_t segment_tiles = count_tiles(view, 0, tile_tokens);
    for (int i = 0; segment_tiles > 0 && i < b.tokens; ++i) {
      const std::int64_t r = std::int64_t(i) * group;
      attend_range({&view, b.q + i * q_stride, group, dim, tile_tokens, 0, segment_tiles, 0,
                    b.m + r, b.l + r, b.o + r * dim});
    }
    prefill_tail_block(b, scratch[std::size_t(omp_get_thread_num())]);
    for (int i = 0; i < b.tokens; ++i) {
      float* o = out.data() + (i0 + i) * q_stride + std::int64_t(h) * group * dim;
      for (int g = 0; g < group; ++g) {
        const std::int64_t r = std::int64_t(i) * group + g;
        const float inv = b.l[r] > 0.0f ? 1.0f / b.l[r] : 0.0f;
        for (int d = 0; d < dim; ++d) o[g * dim + d] = b.o[r * dim + d] * inv;
      }
    }
  }
}

void CpuAttention::attention_mass(const CpuKvStore& store, int layer, std::span<const float> q,
                                  std::int64_t n_query, int n_q_heads, float softmax_scale,
                                  std::span<float> mass) const {
  check_query(store, layer, q.size(), q.size(), n_query, n_q_heads);
  const KvShape& shape = store.options().shape;
  const int dim = shape.head_dim;
  const int group = n_q_heads / shape.n_kv_heads;
  const std::int64_t n = store.layer_tokens(layer);
  check_attention_mass("attention", store.n_committed(), n_query, n);
  if (mass.size() != std::size_t(n_q_heads) * std::size_t(n)) {
    throw Error("attention: mass needs " + std::to_string(std::int64_t(n_q_heads) * n) +
                " floats, got " + std::to_string(mass.size()));
  }
  std::fill(mass.begin(), mass.end(), 0.0f);
  const int threads = thread_count(threads_);
  std::vector<std::vector<float>> keys_t(std::size_t(shape.n_kv_heads));
#pragma omp parallel for num_threads(threads)
  for (int kv_head = 0; kv_head < shape.n_kv_heads; ++kv_head) {
    keys_t[std::size_t(kv_head)] = transposed_keys(store.view(layer, kv_head).tail_keys, n, dim);
  }
  const std::int64_t q_stride = std::int64_t(n_q_heads) * dim;
#pragma omp parallel for schedule(dynamic) num_threads(threads)
  for (int h = 0; h < n_q_heads; ++h) {
    std::vector<float> scores(static_cast<std::size_t>(n));
    std::vector<float> scaled(static_cast<std::size_t>(dim));
    for (std::int64_t i = 0; i < n_query; ++i) {
      const float* qi = q.data() + i * q_stride + std::int64_t(h) * dim;
      for (int d = 0; d < dim; ++d) scaled[std::size_t(d)] = qi[d] * softmax_scale;
      add_attention_weights(scaled.data(), keys_t[std::size_t(h / group)], n, dim,
                            n - n_query + i + 1, scores,
                            mass.data() + std::size_t(h) * std::size_t(n));
    }
  }
}

std::unique_ptr<DecodePlan> CpuAttention::plan_decode(const KvStore& store, int n_q_heads) {
  return std::make_unique<CpuDecodePlan>(cpu_store(store), n_q_heads, thread_count(threads_));
}

void CpuAttention::decode(Stream& /*stream*/, DecodePlan& plan, const KvStore& store, int layer,
                          const Tensor& q, float softmax_scale, const Tensor& out) {
  auto* mine = dynamic_cast<CpuDecodePlan*>(&plan);
  if (mine == nullptr) throw Error("attention: a decode plan made by another backend");
  decode(*mine, cpu_store(store), layer, host_span<const float>("decode", "q", q), softmax_scale,
         host_span<float>("decode", "out", out));
}

void CpuAttention::prefill(Stream& /*stream*/, const KvStore& store, int layer, const Tensor& q,
                           int n_q_heads, float softmax_scale, const Tensor& out) {
  prefill(cpu_store(store), layer, host_span<const float>("prefill", "q", q), q.rows, n_q_heads,
          softmax_scale, host_span<float>("prefill", "out", out));
}

void CpuAttention::attention_mass(Stream& /*stream*/, const KvStore& store, int layer,
                                  const Tensor& q, int n_q_heads, float softmax_scale,
                                  const Tensor& mass) {
  attention_mass(cpu_store(store), layer, host_span<const float>("attention_mass", "q", q), q.rows,
                 n_q_heads, softmax_scale, host_span<float>("attention_mass", "mass", mass));
}

}  // namespace cocktail::cpu
