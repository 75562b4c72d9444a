#include "compute/cpu_compute.hpp"

#include <omp.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "cocktail/compute_checks.hpp"
#include "cocktail/dequantize.hpp"
#include "cocktail/error.hpp"
#include "compute/elementwise_kernels.hpp"
#include "compute/encoder_attention_kernels.hpp"
#include "compute/matmul_kernels.hpp"
#include "compute/row_groups.hpp"
#include "memory/cpu_buffer.hpp"

namespace cocktail::cpu {

namespace {

// Below these sizes a split across threads costs more than it saves (for matmul: weight bytes
// times tokens).
constexpr std::int64_t kMinWeightBytesPerThread = 64 * 1024;
constexpr std::int64_t kMinElementsPerThread = 16 * 1024;
// A GEMM task covers at least this many tokens, so packing a panel is repaid.
constexpr std::int64_t kMinGemmTaskTokens = 64;
// Up to this many tokens, activations are quantized before the threads start.
constexpr std::int64_t kMaxSerialQuantizeTokens = 8;
// GEMM tasks per thread: enough for dynamic scheduling to even out the threads.
constexpr std::int64_t kTasksPerThread = 4;

void expect_size(const char* op, const char* operand, std::size_t got, std::int64_t expected,
                 const std::string& why) {
  if (std::int64_t(got) != expected) {
    throw Error(std::string(op) + ": " + operand + " has " + std::to_string(got) +
                " elements, expected " + why + " = " + std::to_string(expected));
  }
}

void check_matmul(const char* op, const WeightView& w, std::span<const float> x, std::int64_t n,
                  std::span<const float> y) {
  check_weight_view(op, w);
  if (n < 0) throw Error(std::string(op) + ": negative token count " + std::to_string(n));
  expect_size(op, "x", x.size(), n * w.cols,
              "n * cols = " + std::to_string(n) + " * " + std::to_string(w.cols));
  expect_size(op, "y", y.size(), n * w.rows,
              "n * rows = " + std::to_string(n) + " * " + std::to_string(w.rows));
}

std::int64_t round_up_to_group(std::int64_t row, std::int64_t rows) {
  return std::min((row + kRowGroupRows - 1) / kRowGroupRows * kRowGroupRows, rows);
}

std::int64_t weight_bytes(const WeightView& w) {
  return std::int64_t(row_bytes(w.type, w.cols)) * w.rows;
}

// fn(begin, end) over [0, count) in `parts` contiguous ranges, one per thread.
template <class Fn>
void parallel_ranges(std::int64_t count, int parts, const Fn& fn) {
  if (parts <= 1) return fn(std::int64_t(0), count);
#pragma omp parallel for schedule(static) num_threads(parts)
  for (int p = 0; p < parts; ++p) fn(count * p / parts, count * (p + 1) / parts);
}

int parts_for(std::int64_t work, std::int64_t min_per_thread, int threads) {
  return int(std::clamp<std::int64_t>(work / min_per_thread, 1, threads));
}

// The number of rows of `dim` elements in x; throws when x is not a whole number of them.
std::int64_t rows_of(const char* op, std::size_t x_size, std::size_t dim, const char* per_row) {
  if (dim == 0) throw Error(std::string(op) + ": empty " + per_row);
  if (x_size % dim != 0) {
    throw Error(std::string(op) + ": x has " + std::to_string(x_size) +
                " elements, not a whole number of rows of " + per_row + "'s " +
                std::to_string(dim));
  }
  return std::int64_t(x_size / dim);
}

}  // namespace

std::unique_ptr<CpuWeights> CpuCompute::upload_matrix(const WeightView& w) const {
  check_weight_view("upload", w);
  std::unique_ptr<RowGroupWeights> row_groups;
  if (row_groups_ && row_group_gemv_supported(w.type, gemv_bits(w.type))) {
    row_groups = std::make_unique<RowGroupWeights>(w, arena_);
  }
  return std::make_unique<CpuWeights>(w, std::move(row_groups), this);
}

const CpuWeights& CpuCompute::own(const char* op, const Weights& w) const {
  const auto* mine = dynamic_cast<const CpuWeights*>(&w);
  if (mine == nullptr || mine->maker() != this) {
    throw Error(std::string(op) + ": the " + std::to_string(w.rows()) + " x " +
                std::to_string(w.cols()) +
                " weights were uploaded by another Compute; upload them with this one");
  }
  return *mine;
}

int CpuCompute::mode_bits() const {
  switch (activations_) {
    case MatmulActivations::int8:
      return 8;
    case MatmulActivations::int16:
      return 16;
    case MatmulActivations::f32:
      break;
  }
  return 0;
}

int CpuCompute::activation_bits(TensorType type) const {
  return integer_gemm_supported(type) ? mode_bits() : 0;
}

// Decode rounds its activations wherever an integer GEMV takes them, even where prefill's GEMM
// stays in float (below AVX-512).
int CpuCompute::gemv_bits(TensorType type) const {
  const int bits = mode_bits();
  return bits != 0 && integer_gemv_supported(type, bits) ? bits : 0;
}

int CpuCompute::threads() const {
  return threads_ > 0 ? threads_ : omp_get_max_threads();
}

void CpuCompute::matmul_shared_input(std::span<const float> x, std::int64_t n,
                                     std::span<const HostMatmulOutput> outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    try {
      check_matmul("matmul_shared_input", outputs[i].w->file(), x, n, outputs[i].y);
      own("matmul_shared_input", *outputs[i].w);
    } catch (const Error& e) {  // the label is built only when it is needed
      throw Error(std::string(e.what()) + " (output " + std::to_string(i) + ")");
    }
  }
  if (n == 0 || outputs.empty()) return;
  if (n > kGemvMaxTokens) {
    for (const HostMatmulOutput& out : outputs) matmul(*out.w, x, n, out.y);
    return;
  }
  gemv(x, n, outputs);
}

// Decode: the GEMV of every output in one parallel pass over their rows laid end to end, with
// x quantized once where the outputs share integer activations.
void CpuCompute::gemv(std::span<const float> x, std::int64_t n,
                      std::span<const HostMatmulOutput> outputs) {
  std::int64_t rows = 0, bytes = 0;
  for (const HostMatmulOutput& out : outputs) {
    rows += out.w->rows();
    bytes += weight_bytes(out.w->file());
  }
  // Small matrices stay on fewer threads: a parallel region costs microseconds.
  const int n_threads = parts_for(bytes * n, kMinWeightBytesPerThread, threads());
  // With quantized activations (the GEMM's rounding) a block is dotted in integers instead of
  // decoded to floats. Every type that rounds them rounds to the mode's bits, so the outputs
  // that take the integer GEMV share one quantization of x.
  int bits = 0;
  for (const HostMatmulOutput& out : outputs) {
    bits = std::max(bits, gemv_bits(out.w->file().type));
  }
  std::optional<QuantizedActivations> xq;
  if (bits != 0) {
    xq.emplace(bits, n, outputs[0].w->cols());
    quantize_activations(x.data(), 0, n, *xq);
    // The VNNI kernels, and every row-group kernel, take 16-bit activations as byte planes.
    const bool planes =
        std::any_of(outputs.begin(), outputs.end(), [&](const HostMatmulOutput& out) {
          return out.w->row_groups() || integer_gemv(out.w->file().type, bits) == IntegerGemv::vnni;
        });
    if (bits == 16 && planes) split_byte_planes(*xq);
  }
  parallel_ranges(rows, n_threads, [&](std::int64_t begin, std::int64_t end) {
    std::int64_t first = 0;  // of the current output, in the rows laid end to end
    for (const HostMatmulOutput& out : outputs) {
      const WeightView& w = out.w->file();
      const std::int64_t lo = std::max(begin, first) - first;
      const std::int64_t hi = std::min(end, first + w.rows) - first;
      if (const RowGroupWeights* groups = out.w->row_groups(); groups && lo < hi) {
        // Whole groups: a boundary between two threads moves up to the next group.
        const std::int64_t first_row = round_up_to_group(lo, w.rows);
        const std::int64_t last_row = round_up_to_group(hi, w.rows);
        if (first_row < last_row)
          row_group_gemv(*groups, *xq, n, out.y.data(), first_row, last_row);
      } else if (lo < hi) {
        if (gemv_bits(w.type) != 0) {
          int_gemv_rows(w, *xq, n, out.y.data(), lo, hi);
        } else {
          gemv_rows(w, x.data(), n, out.y.data(), lo, hi);
        }
      }
      first += w.rows;
    }
  });
}

void CpuCompute::matmul(const CpuWeights& weights, std::span<const float> x, std::int64_t n,
                        std::span<float> y) {
  const WeightView& w = weights.file();
  check_matmul("matmul", w, x, n, y);
  own("matmul", weights);
  if (n == 0) return;
  if (n <= kGemvMaxTokens) {
    const HostMatmulOutput out{&weights, y};
    return gemv(x, n, std::span(&out, 1));
  }
  const int n_threads = parts_for(weight_bytes(w) * n, kMinWeightBytesPerThread, threads());
  const int bits = activation_bits(w.type);
  // About kTasksPerThread tasks a thread: row ranges of whole panels, times token ranges
  // when the panels are too few.
  const std::int64_t panels = (w.rows + kGemmRowQuantum - 1) / kGemmRowQuantum;
  const std::int64_t wanted = kTasksPerThread * n_threads;
  const std::int64_t token_tasks = std::clamp<std::int64_t>(
      (wanted + panels - 1) / panels, 1, std::max<std::int64_t>(1, n / kMinGemmTaskTokens));
  const std::int64_t row_tasks = std::clamp<std::int64_t>(wanted / token_tasks, 1, panels);
  std::optional<QuantizedActivations> xq;
  if (bits != 0) xq.emplace(bits, n, w.cols);
  // A few tokens are quantized here, saving the threads a barrier.
  const bool quantize_in_threads = xq && n > kMaxSerialQuantizeTokens;
  if (xq && !quantize_in_threads) quantize_activations(x.data(), 0, n, *xq);
  std::vector<GemmScratch> scratch;
  for (int t = 0; t < n_threads; ++t) scratch.emplace_back(gemm_scratch_bytes(w, bits));

#pragma omp parallel num_threads(n_threads)
  {
    if (quantize_in_threads) {
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < n; ++t) quantize_activations(x.data(), t, t + 1, *xq);
    }
    const GemmScratch& mine = scratch[std::size_t(omp_get_thread_num())];
#pragma omp for schedule(dynamic)
    for (std::int64_t task = 0; task < row_tasks * token_tasks; ++task) {
      const std::int64_t rt = task / token_tasks;
      const std::int64_t tt = task % token_tasks;
      GemmTask g;
      g.w = &w;
      g.x = x.data();
      g.xq = xq ? &*xq : nullptr;
      g.y = y.data();
      g.row_begin = panels * rt / row_tasks * kGemmRowQuantum;
      g.row_end = std::min(w.rows, panels * (rt + 1) / row_tasks * kGemmRowQuantum);
      g.token_begin = n * tt / token_tasks;
      g.token_end = n * (tt + 1) / token_tasks;
      gemm_rows(g, mine);
    }
  }
}

void CpuCompute::embedding(const WeightView& table, std::span<const std::int32_t> ids,
                           std::span<float> out) {
  check_weight_view("embedding", table);
  const auto count = std::int64_t(ids.size());
  expect_size("embedding", "out", out.size(), count * table.cols,
              "ids * cols = " + std::to_string(count) + " * " + std::to_string(table.cols));
  for (std::int64_t i = 0; i < count; ++i) {
    if (ids[std::size_t(i)] < 0 || ids[std::size_t(i)] >= table.rows) {
      throw Error("embedding: id " + std::to_string(ids[std::size_t(i)]) + " at position " +
                  std::to_string(i) + " is outside the table's " + std::to_string(table.rows) +
                  " rows");
    }
  }
  const std::size_t stride = row_bytes(table.type, table.cols);
  parallel_ranges(count, parts_for(count * table.cols, kMinElementsPerThread, threads()),
                  [&](std::int64_t begin, std::int64_t end) {
                    for (std::int64_t i = begin; i < end; ++i) {
                      dequantize_row(table.type,
                                     table.data + stride * std::size_t(ids[std::size_t(i)]),
                                     table.cols, out.data() + i * table.cols);
                    }
                  });
}

void CpuCompute::rms_norm(std::span<const float> x, std::span<const float> weight, float eps,
                          std::span<float> out) {
  const auto dim = std::int64_t(weight.size());
  const std::int64_t rows = rows_of("rms_norm", x.size(), weight.size(), "weight");
  expect_size("rms_norm", "out", out.size(), std::int64_t(x.size()), "x's size");
  parallel_ranges(rows, parts_for(std::int64_t(x.size()), kMinElementsPerThread, threads()),
                  [&](std::int64_t begin, std::int64_t end) {
                    rms_norm_rows(x.data(), weight.data(), dim, eps, out.data(), begin, end);
                  });
}

void CpuCompute::rope(std::span<float> x, std::span<const std::int32_t> positions, int n_heads,
                      int head_dim, float base, RopeStyle style) {
  check_rope_settings(n_heads, head_dim, base);
  const std::int64_t row = std::int64_t(n_heads) * head_dim;
  const auto n = std::int64_t(positions.size());
  expect_size("rope", "x", x.size(), n * row,
              "positions * n_heads * head_dim = " + std::to_string(n) + " * " +
                  std::to_string(n_heads) + " * " + std::to_string(head_dim));
  parallel_ranges(n, parts_for(n * row, kMinElementsPerThread, threads()),
                  [&](std::int64_t begin, std::int64_t end) {
                    rope_tokens(x.data(), positions.data(), n_heads, head_dim, base, style, begin,
                                end);
                  });
}

void CpuCompute::silu_mul(std::span<float> gate, std::span<const float> up) {
  expect_size("silu_mul", "up", up.size(), std::int64_t(gate.size()), "gate's size");
  const auto count = std::int64_t(gate.size());
  parallel_ranges(count, parts_for(count, kMinElementsPerThread, threads()),
                  [&](std::int64_t begin, std::int64_t end) {
                    silu_mul_range(gate.data(), up.data(), begin, end);
                  });
}

void CpuCompute::add(std::span<float> x, std::span<const float> y) {
  expect_size("add", "y", y.size(), std::int64_t(x.size()), "x's size");
  const auto count = std::int64_t(x.size());
  parallel_ranges(
      count, parts_for(count, kMinElementsPerThread, threads()),
      [&](std::int64_t begin, std::int64_t end) { add_range(x.data(), y.data(), begin, end); });
}

void CpuCompute::layer_norm(std::span<const float> x, std::span<const float> weight,
                            std::span<const float> bias, float eps, std::span<float> out) {
  const auto dim = std::int64_t(weight.size());
  const std::int64_t rows = rows_of("layer_norm", x.size(), weight.size(), "weight");
  expect_size("layer_norm", "bias", bias.size(), dim, "weight's size");
  expect_size("layer_norm", "out", out.size(), std::int64_t(x.size()), "x's size");
  parallel_ranges(rows, parts_for(std::int64_t(x.size()), kMinElementsPerThread, threads()),
                  [&](std::int64_t begin, std::int64_t end) {
                    layer_norm_rows(x.data(), weight.data(), bias.data(), dim, eps, out.data(),
                                    begin, end);
                  });
}

void CpuCompute::gelu(std::span<float> x) {
  const auto count = std::int64_t(x.size());
  parallel_ranges(count, parts_for(count, kMinElementsPerThread, threads()),
                  [&](std::int64_t begin, std::int64_t end) { gelu_range(x.data(), begin, end); });
}

void CpuCompute::add_bias(std::span<float> x, std::span<const float> bias) {
  const auto dim = std::int64_t(bias.size());
  const std::int64_t rows = rows_of("add_bias", x.size(), bias.size(), "bias");
  parallel_ranges(rows, parts_for(std::int64_t(x.size()), kMinElementsPerThread, threads()),
                  [&](std::int64_t begin, std::int64_t end) {
                    add_bias_rows(x.data(), bias.data(), dim, begin, end);
                  });
}

void CpuCompute::encoder_attention(std::span<const float> q, std::span<const float> k,
                                   std::span<const float> v, std::span<const std::int64_t> lengths,
                                   int n_heads, int head_dim, float scale, std::span<float> out) {
  const std::int64_t tokens = check_encoder_batch(lengths, n_heads, head_dim);
  std::vector<std::int64_t> starts(lengths.size() + 1, 0);
  std::partial_sum(lengths.begin(), lengths.end(), starts.begin() + 1);
  const std::int64_t stride = std::int64_t(n_heads) * head_dim;
  const std::string why = "tokens * n_heads * head_dim = " + std::to_string(tokens) + " * " +
                          std::to_string(n_heads) + " * " + std::to_string(head_dim);
  expect_size("encoder_attention", "q", q.size(), tokens * stride, why);
  expect_size("encoder_attention", "k", k.size(), tokens * stride, why);
  expect_size("encoder_attention", "v", v.size(), tokens * stride, why);
  expect_size("encoder_attention", "out", out.size(), tokens * stride, why);
  if (tokens == 0) return;

  // One task per sequence and head; work grows with length², so a task's cost is uneven and
  // the schedule dynamic.
  const std::int64_t max_length = *std::max_element(lengths.begin(), lengths.end());
  const std::int64_t work =
      std::inner_product(lengths.begin(), lengths.end(), lengths.begin(), std::int64_t(0)) * stride;
  const int n_threads = parts_for(work, kMinElementsPerThread, threads());
  const std::size_t scratch_floats = encoder_attention_scratch(max_length, head_dim);
  std::vector<float> scratch(std::size_t(n_threads) * scratch_floats);
  const auto tasks = std::int64_t(lengths.size()) * n_heads;
#pragma omp parallel for schedule(dynamic) num_threads(n_threads)
  for (std::int64_t task = 0; task < tasks; ++task) {
    const auto s = std::size_t(task / n_heads);
    const std::int64_t offset = starts[s] * stride + (task % n_heads) * head_dim;
    encoder_attention_head(q.data() + offset, k.data() + offset, v.data() + offset,
                           out.data() + offset, lengths[s], stride, head_dim, scale,
                           scratch.data() + std::size_t(omp_get_thread_num()) * scratch_floats);
  }
}

namespace {

std::span<float> f32(const char* op, const char* operand, const Tensor& t) {
  return host_span<float>(op, operand, t);
}

std::span<const std::int32_t> i32(const char* op, const char* operand, const Tensor& t) {
  return host_span<const std::int32_t>(op, operand, t);
}

}  // namespace

void CpuCompute::matmul(Stream& /*stream*/, const Weights& w, const Tensor& x, const Tensor& y) {
  const CpuWeights& mine = own("matmul", w);
  check_matmul("matmul", w, x, y);
  matmul(mine, f32("matmul", "x", x), x.rows, f32("matmul", "y", y));
}

void CpuCompute::matmul_shared_input(Stream& /*stream*/, const Tensor& x,
                                     std::span<const MatmulOutput> outputs) {
  std::vector<HostMatmulOutput> host;
  host.reserve(outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const MatmulOutput& out = outputs[i];
    try {
      check_matmul("matmul_shared_input", *out.w, x, out.y);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + " (output " + std::to_string(i) + ")");
    }
    host.push_back({&own("matmul_shared_input", *out.w), f32("matmul_shared_input", "y", out.y)});
  }
  matmul_shared_input(f32("matmul_shared_input", "x", x), x.rows, host);
}

void CpuCompute::embedding(Stream& /*stream*/, const Weights& table, const Tensor& ids,
                           const Tensor& out) {
  const CpuWeights& mine = own("embedding", table);
  check_embedding(table, ids, out);
  embedding(mine.file(), i32("embedding", "ids", ids), f32("embedding", "out", out));
}

void CpuCompute::rms_norm(Stream& /*stream*/, const Tensor& x, const Tensor& weight, float eps,
                          const Tensor& out) {
  check_rms_norm(x, weight, out);
  rms_norm(f32("rms_norm", "x", x), f32("rms_norm", "weight", weight), eps,
           f32("rms_norm", "out", out));
}

void CpuCompute::rope(Stream& /*stream*/, const Tensor& x, const Tensor& positions, int n_heads,
                      int head_dim, float base, RopeStyle style) {
  check_rope(x, positions, n_heads, head_dim, base);
  rope(f32("rope", "x", x), i32("rope", "positions", positions), n_heads, head_dim, base, style);
}

void CpuCompute::silu_mul(Stream& /*stream*/, const Tensor& gate, const Tensor& up) {
  check_same_shape("silu_mul", "up", up, gate);
  silu_mul(f32("silu_mul", "gate", gate), f32("silu_mul", "up", up));
}

void CpuCompute::add(Stream& /*stream*/, const Tensor& x, const Tensor& y) {
  check_same_shape("add", "y", y, x);
  add(f32("add", "x", x), f32("add", "y", y));
}

void CpuCompute::layer_norm(Stream& /*stream*/, const Tensor& x, const Tensor& weight,
                            const Tensor& bias, float eps, const Tensor& out) {
  check_layer_norm(x, weight, bias, out);
  layer_norm(f32("layer_norm", "x", x), f32("layer_norm", "weight", weight),
             f32("layer_norm", "bias", bias), eps, f32("layer_norm", "out", out));
}

void CpuCompute::gelu(Stream& /*stream*/, const Tensor& x) {
  gelu(f32("gelu", "x", x));
}

void CpuCompute::add_bias(Stream& /*stream*/, const Tensor& x, const Tensor& bias) {
  check_add_bias(x, bias);
  add_bias(f32("add_bias", "x", x), f32("add_bias", "bias", bias));
}

void CpuCompute::encoder_attention(Stream& /*stream*/, const Tensor& q, const Tensor& k,
                                   const Tensor& v, std::span<const std::int64_t> lengths,
                                   int n_heads, int head_dim, float scale, const Tensor& out) {
  check_encoder_attention(q, k, v, lengths, n_heads, head_dim, out);
  encoder_attention(f32("encoder_attention", "q", q), f32("encoder_attention", "k", k),
                    f32("encoder_attention", "v", v), lengths, n_heads, head_dim, scale,
                    f32("encoder_attention", "out", out));
}

}  // namespace cocktail::cpu
