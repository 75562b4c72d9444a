#include "compute/cpu_compute.hpp"

#include <omp.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "cocktail/dequantize.hpp"
#include "cocktail/error.hpp"
#include "compute/elementwise_kernels.hpp"
#include "compute/encoder_attention_kernels.hpp"
#include "compute/matmul_kernels.hpp"
#include "compute/row_groups.hpp"

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

void check_weights(const char* op, const WeightView& w) {
  const TensorTypeInfo ti = info(w.type);
  if (w.rows <= 0 || w.cols <= 0 || w.data == nullptr) {
    throw Error(std::string(op) + ": empty weights (" + std::to_string(w.rows) + " x " +
                std::to_string(w.cols) + ", data " + (w.data ? "set" : "null") + ")");
  }
  if (w.cols % ti.block_elements != 0) {
    throw Error(std::string(op) + ": " + std::string(ti.name) + " rows of " +
                std::to_string(w.cols) + " elements are not a whole number of " +
                std::to_string(ti.block_elements) + "-element blocks");
  }
}

void check_matmul(const char* op, const WeightView& w, std::span<const float> x, std::int64_t n,
                  std::span<const float> y) {
  check_weights(op, w);
  if (n < 0) throw Error(std::string(op) + ": negative token count " + std::to_string(n));
  expect_size(op, "x", x.size(), n * w.cols,
              "n * cols = " + std::to_string(n) + " * " + std::to_string(w.cols));
  expect_size(op, "y", y.size(), n * w.rows,
              "n * rows = " + std::to_string(n) + " * " + std::to_string(w.rows));
}

// The row-group copy a view carries (CpuCompute::check_prepared has accepted it), or null.
const RowGroupWeights* row_groups_of(const WeightView& w) {
  return static_cast<const RowGroupWeights*>(w.prepared);
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

std::unique_ptr<PreparedWeights> CpuCompute::prepare(const WeightView& w) const {
  check_weights("prepare", w);
  if (!row_groups_ || !integer_gemv_supported(w.type, gemv_bits(w.type))) return nullptr;
  return std::make_unique<RowGroupWeights>(w, this, arena_);
}

void CpuCompute::check_prepared(const char* op, const WeightView& w) const {
  if (w.prepared == nullptr) return;
  const auto* copy = dynamic_cast<const RowGroupWeights*>(w.prepared);
  if (copy == nullptr || !copy->copies(w, this)) {
    throw Error(std::string(op) + ": the " + std::to_string(w.rows) + " x " +
                std::to_string(w.cols) +
                " weights carry a prepared copy that this CPU Compute did not make of them");
  }
}

int CpuCompute::activation_bits(TensorType type) const {
  if (activations_ == MatmulActivations::f32 || !integer_gemm_supported(type)) return 0;
  return activations_ == MatmulActivations::int8 ? 8 : 16;
}

int CpuCompute::gemv_bits(TensorType type) const {
  const int bits = activation_bits(type);
  return bits != 0 && integer_gemv_supported(type, bits) ? bits : 0;
}

int CpuCompute::threads() const {
  return threads_ > 0 ? threads_ : omp_get_max_threads();
}

void CpuCompute::matmul_shared_input(std::span<const float> x, std::int64_t n,
                                     std::span<const MatmulOutput> outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    try {
      check_matmul("matmul_shared_input", outputs[i].w, x, n, outputs[i].y);
      check_prepared("matmul_shared_input", outputs[i].w);
    } catch (const Error& e) {  // the label is built only when it is needed
      throw Error(std::string(e.what()) + " (output " + std::to_string(i) + ")");
    }
  }
  if (n == 0 || outputs.empty()) return;
  if (n > kGemvMaxTokens) return Compute::matmul_shared_input(x, n, outputs);
  gemv(x, n, outputs);
}

// Decode: the GEMV of every output in one parallel pass over their rows laid end to end, with
// x quantized once where the outputs share integer activations.
void CpuCompute::gemv(std::span<const float> x, std::int64_t n,
                      std::span<const MatmulOutput> outputs) {
  std::int64_t rows = 0, bytes = 0;
  for (const MatmulOutput& out : outputs) {
    rows += out.w.rows;
    bytes += weight_bytes(out.w);
  }
  // Small matrices stay on fewer threads: a parallel region costs microseconds.
  const int n_threads = parts_for(bytes * n, kMinWeightBytesPerThread, threads());
  // With quantized activations (the GEMM's rounding) a block is dotted in integers instead of
  // decoded to floats. Every type that rounds them rounds to the mode's bits, so the outputs
  // that take the integer GEMV share one quantization of x.
  int bits = 0;
  for (const MatmulOutput& out : outputs) bits = std::max(bits, gemv_bits(out.w.type));
  std::optional<QuantizedActivations> xq;
  if (bits != 0) {
    xq.emplace(bits, n, outputs[0].w.cols);
    quantize_activations(x.data(), 0, n, *xq);
    if (bits == 16) split_byte_planes(*xq);
  }
  parallel_ranges(rows, n_threads, [&](std::int64_t begin, std::int64_t end) {
    std::int64_t first = 0;  // of the current output, in the rows laid end to end
    for (const MatmulOutput& out : outputs) {
      const std::int64_t lo = std::max(begin, first) - first;
      const std::int64_t hi = std::min(end, first + out.w.rows) - first;
      if (const RowGroupWeights* groups = row_groups_of(out.w); groups && lo < hi) {
        // Whole groups: a boundary between two threads moves up to the next group.
        const std::int64_t first_row = round_up_to_group(lo, out.w.rows);
        const std::int64_t last_row = round_up_to_group(hi, out.w.rows);
        if (first_row < last_row)
          row_group_gemv(*groups, *xq, n, out.y.data(), first_row, last_row);
      } else if (lo < hi) {
        if (gemv_bits(out.w.type) != 0) {
          int_gemv_rows(out.w, *xq, n, out.y.data(), lo, hi);
        } else {
          gemv_rows(out.w, x.data(), n, out.y.data(), lo, hi);
        }
      }
      first += out.w.rows;
    }
  });
}

void CpuCompute::matmul(const WeightView& w, std::span<const float> x, std::int64_t n,
                        std::span<float> y) {
  check_matmul("matmul", w, x, n, y);
  check_prepared("matmul", w);
  if (n == 0) return;
  if (n <= kGemvMaxTokens) {
    const MatmulOutput out{w, y};
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
  check_weights("embedding", table);
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
                      int head_dim, float base) {
  if (n_heads <= 0 || head_dim <= 0 || head_dim % 2 != 0 || !(base > 0.0f)) {
    throw Error("rope: needs n_heads > 0, an even head_dim > 0 and base > 0, got n_heads " +
                std::to_string(n_heads) + ", head_dim " + std::to_string(head_dim) + ", base " +
                std::to_string(base));
  }
  const std::int64_t row = std::int64_t(n_heads) * head_dim;
  const auto n = std::int64_t(positions.size());
  expect_size("rope", "x", x.size(), n * row,
              "positions * n_heads * head_dim = " + std::to_string(n) + " * " +
                  std::to_string(n_heads) + " * " + std::to_string(head_dim));
  parallel_ranges(n, parts_for(n * row, kMinElementsPerThread, threads()),
                  [&](std::int64_t begin, std::int64_t end) {
                    rope_tokens(x.data(), positions.data(), n_heads, head_dim, base, begin, end);
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
  if (n_heads <= 0 || head_dim <= 0) {
    throw Error("encoder_attention: needs n_heads > 0 and head_dim > 0, got n_heads " +
                std::to_string(n_heads) + ", head_dim " + std::to_string(head_dim));
  }
  std::vector<std::int64_t> starts(lengths.size() + 1, 0);
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    if (lengths[s] <= 0) {
      throw Error("encoder_attention: sequence " + std::to_string(s) + " has length " +
                  std::to_string(lengths[s]) + "; every sequence needs a token");
    }
    starts[s + 1] = starts[s] + lengths[s];
  }
  const std::int64_t stride = std::int64_t(n_heads) * head_dim;
  const std::int64_t tokens = starts.back();
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

}  // namespace cocktail::cpu
