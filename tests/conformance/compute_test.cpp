// Compute conformance: every op on device tensors against float64 references from its
// definition in compute.hpp; weights are GGUF blocks made here, read by dequantize.hpp.

#include "cocktail/compute.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cocktail/dequantize.hpp"
#include "cocktail/error.hpp"
#include "conformance.hpp"
#include "reference.hpp"
#include "support/layer_norm_reference.hpp"
#include "support/random_kv.hpp"
#include "support/random_weights.hpp"
#include "support/rope_reference.hpp"

namespace cocktail::conformance {
namespace {

using testing::Bytes;
using testing::put_half;
using testing::random_weights;

// Row length: whole blocks, more than one (k-quants have 256 elements a block).
std::int64_t cols_for(TensorType t) {
  return info(t).block_elements == 256 ? 512 : 96;
}

// Normal activations with an outlier now and then, as real ones have.
std::vector<float> random_activations(std::size_t count, std::mt19937& rng) {
  std::vector<float> v = testing::random_floats(count, rng);
  for (std::size_t i = 5; i < count; i += 97) v[i] *= 12.0f;
  return v;
}

// A matrix of one type: its bytes and the float64 values they decode to.
struct Matrix {
  TensorType type;
  std::int64_t rows, cols;
  Bytes bytes;
  std::vector<double> w;  // [rows][cols]

  Matrix(TensorType t, std::int64_t r, std::int64_t c, std::mt19937& rng)
      : type(t), rows(r), cols(c), bytes(random_weights(t, r, c, rng)) {
    std::vector<float> row(static_cast<std::size_t>(c));
    for (std::int64_t i = 0; i < r; ++i) {
      dequantize_row(t, bytes.data() + row_bytes(t, c) * std::size_t(i), c, row.data());
      w.insert(w.end(), row.begin(), row.end());
    }
  }
  WeightView view() const { return {type, bytes.data(), rows, cols}; }
};

// Checks y = x · wᵀ ([n][rows]). The tolerance admits float32 rounding, and what rounding the
// activations to 8 bits per 32-element block (a backend may, as llama.cpp does) can move a
// product: max|x| / 254 of the block times Σ|w| over it. That also covers weights a backend
// keeps in FP16 or BF16, which move a product by at most 2^-9 of Σ|w·x|.
void expect_products(const Matrix& m, const std::vector<float>& x, std::int64_t n,
                     const std::vector<float>& y, const std::string& what) {
  Failures off;
  for (std::int64_t k = 0; k < n; ++k) {
    const float* xk = x.data() + k * m.cols;
    for (std::int64_t r = 0; r < m.rows; ++r) {
      const double* wr = m.w.data() + r * m.cols;
      double want = 0.0, magnitude = 0.0, int8_bound = 0.0;
      for (std::int64_t j = 0; j < m.cols; ++j) {
        want += wr[j] * xk[j];
        magnitude += std::abs(wr[j] * xk[j]);
      }
      for (std::int64_t b0 = 0; b0 < m.cols; b0 += 32) {
        double amax = 0.0, wsum = 0.0;
        for (std::int64_t j = b0; j < std::min(m.cols, b0 + 32); ++j) {
          amax = std::max(amax, std::abs(double(xk[j])));
          wsum += std::abs(wr[j]);
        }
        int8_bound += amax / 254 * wsum;
      }
      const double tolerance = 2e-5 * magnitude + 1e-6 + int8_bound;
      const float got = y[std::size_t(k * m.rows + r)];
      off.add(std::abs(got - want) <= tolerance, [&] {
        return "token " + std::to_string(k) + " row " + std::to_string(r) + ": got " +
               std::to_string(got) + ", want " + std::to_string(want) + " ± " +
               std::to_string(tolerance);
      });
    }
  }
  EXPECT_EQ(off.count, 0) << what << " " << to_string(m.type) << " " << m.rows << "x" << m.cols
                          << " n=" << n << ": " << off.first;
}

class ComputeConformance : public BackendTest {
 protected:
  // The weight types this backend's Compute accepts (upload throws an Error for the others,
  // which are listed on stdout); at least one.
  std::vector<TensorType> accepted_types(Compute& compute) const {
    std::vector<TensorType> accepted;
    std::mt19937 rng(1);
    for (const TensorType t : testing::kAllWeightTypes) {
      const Matrix m(t, 2, cols_for(t), rng);
      try {
        compute.upload(m.view());
        accepted.push_back(t);
      } catch (const Error& e) {
        std::cout << "[ note     ] " << GetParam() << " does not take " << to_string(t)
                  << " weights: " << e.what() << "\n";
      }
    }
    EXPECT_FALSE(accepted.empty());
    return accepted;
  }

  std::vector<float> run_matmul(Compute& compute, const Weights& w, const std::vector<float>& x,
                                std::int64_t n) const {
    const DeviceRows x_device = to_device(x, n, w.cols());
    const DeviceRows y_device = device_floats(n, w.rows());
    compute.matmul(stream(), w, x_device.tensor, y_device.tensor);
    return read_back(y_device.tensor);
  }
};
COCKTAIL_CONFORMANCE_SUITE(ComputeConformance);

// Decode (one token) and prefill (more than 8) products with every weight type, on 45 rows (not
// a multiple of any row group).
TEST_P(ComputeConformance, MatmulOfEveryWeightType) {
  const std::shared_ptr<Compute> compute = backend().make_compute();
  std::mt19937 rng(2);
  for (const TensorType t : accepted_types(*compute)) {
    const Matrix m(t, 45, cols_for(t), rng);
    const std::unique_ptr<Weights> w = compute->upload(m.view());
    EXPECT_EQ(w->rows(), m.rows);
    EXPECT_EQ(w->cols(), m.cols);
    for (const std::int64_t n : {1, 11}) {
      const std::vector<float> x = random_activations(std::size_t(n * m.cols), rng);
      expect_products(m, x, n, run_matmul(*compute, *w, x, n), "matmul");
    }
  }
}

// Several weights over one input, of one type and mixed with f32, give each its product.
TEST_P(ComputeConformance, MatmulSharedInputOfEveryWeightType) {
  const std::shared_ptr<Compute> compute = backend().make_compute();
  std::mt19937 rng(3);
  for (const TensorType t : accepted_types(*compute)) {
    const std::int64_t cols = cols_for(t);
    const Matrix matrices[] = {
        {t, 45, cols, rng}, {TensorType::f32, 33, cols, rng}, {t, 20, cols, rng}};
    std::vector<std::unique_ptr<Weights>> uploads;
    for (const Matrix& m : matrices) uploads.push_back(compute->upload(m.view()));
    for (const std::int64_t n : {1, 11}) {
      const std::vector<float> x = random_activations(std::size_t(n * cols), rng);
      const DeviceRows x_device = to_device(x, n, cols);
      std::vector<DeviceRows> ys;
      std::vector<MatmulOutput> outputs;
      for (std::size_t i = 0; i < uploads.size(); ++i) {
        ys.push_back(device_floats(n, matrices[i].rows));
        outputs.push_back({uploads[i].get(), ys.back().tensor});
      }
      compute->matmul_shared_input(stream(), x_device.tensor, outputs);
      for (std::size_t i = 0; i < uploads.size(); ++i) {
        expect_products(matrices[i], x, n, read_back(ys[i].tensor),
                        "matmul_shared_input output " + std::to_string(i));
      }
    }
  }
}

// Rows of the table: the file's values, up to FP16 rounding (a backend may keep a table in
// FP16).
TEST_P(ComputeConformance, EmbeddingLooksUpRows) {
  const std::shared_ptr<Compute> compute = backend().make_compute();
  std::mt19937 rng(4);
  const std::vector<std::int32_t> ids = {3, 0, 49, 3, 17, 48, 1, 2, 30, 31, 9};
  for (const TensorType t : accepted_types(*compute)) {
    const Matrix table(t, 50, cols_for(t), rng);
    const std::unique_ptr<Weights> w = compute->upload(table.view());
    const DeviceRows ids_device = ints_to_device(ids);
    const DeviceRows out_device = device_floats(std::int64_t(ids.size()), table.cols);
    compute->embedding(stream(), *w, ids_device.tensor, out_device.tensor);
    const std::vector<float> out = read_back(out_device.tensor);
    Failures off;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      for (std::size_t j = 0; j < std::size_t(table.cols); ++j) {
        const double want = table.w[std::size_t(ids[i]) * std::size_t(table.cols) + j];
        const float got = out[i * std::size_t(table.cols) + j];
        off.add(std::abs(got - want) <= 0x1p-11 * std::abs(want) + 0x1p-25, [&] {
          return "id " + std::to_string(ids[i]) + " column " + std::to_string(j) + ": got " +
                 std::to_string(got) + ", want " + std::to_string(want);
        });
      }
    }
    EXPECT_EQ(off.count, 0) << to_string(t) << ": " << off.first;
  }
}

TEST_P(ComputeConformance, RmsNormIntoAnotherTensorAndInPlace) {
  const std::shared_ptr<Compute> compute = backend().make_compute();
  std::mt19937 rng(5);
  const std::int64_t rows = 13, dim = 96;
  const std::vector<float> x = random_activations(std::size_t(rows * dim), rng);
  const std::vector<float> weight = random_activations(std::size_t(dim), rng);
  const DeviceRows x_device = to_device(x, rows, dim);
  const DeviceRows weight_device = to_device(weight, 1, dim);
  const DeviceRows out_device = device_floats(rows, dim);
  compute->rms_norm(stream(), x_device.tensor, weight_device.tensor, 1e-5f, out_device.tensor);
  const std::vector<float> out = read_back(out_device.tensor);
  compute->rms_norm(stream(), x_device.tensor, weight_device.tensor, 1e-5f, x_device.tensor);
  EXPECT_EQ(read_back(x_device.tensor), out);
  for (std::int64_t r = 0; r < rows; ++r) {
    double squares = 0.0;
    for (std::int64_t j = 0; j < dim; ++j)
      squares += double(x[std::size_t(r * dim + j)]) * x[std::size_t(r * dim + j)];
    const double inverse = 1.0 / std::sqrt(squares / double(dim) + 1e-5);
    for (std::int64_t j = 0; j < dim; ++j) {
      const auto at = std::size_t(r * dim + j);
      const double want = x[at] * inverse * weight[std::size_t(j)];
      ASSERT_NEAR(out[at], want, 1e-5 * (std::abs(want) + 1e-3)) << "row " << r << " column " << j;
    }
  }
}

// Each style's pairs rotate by position · base^(-2i/head_dim). Calls that change the base, the
// head size or the style, and repeated positions, must each rotate by their own angles. The
// tolerance admits angles computed in float32 (an error of position · 2^-22 radians).
TEST_P(ComputeConformance, RopeRotatesEachStylesPairs) {
  const std::shared_ptr<Compute> compute = backend().make_compute();
  std::mt19937 rng(6);
  const std::vector<std::int32_t> positions = {0, 1, 7, 7, 31, 513, 4095, 8191, 2, 3, 100};
  const auto n = std::int64_t(positions.size());
  const DeviceRows positions_device = ints_to_device(positions);
  const int n_heads = 3;
  const std::tuple<int, float, RopeStyle> settings[] = {{64, 10000.0f, RopeStyle::adjacent_pairs},
                                                        {64, 500000.0f, RopeStyle::adjacent_pairs},
                                                        {32, 10000.0f, RopeStyle::adjacent_pairs},
                                                        {128, 1e6f, RopeStyle::halves},
                                                        {32, 10000.0f, RopeStyle::halves}};
  for (const auto& [head_dim, base, style] : settings) {
    const std::int64_t width = std::int64_t(n_heads) * head_dim;
    const std::vector<float> x = random_activations(std::size_t(n * width), rng);
    const DeviceRows x_device = to_device(x, n, width);
    compute->rope(stream(), x_device.tensor, positions_device.tensor, n_heads, head_dim, base,
                  style);
    const std::vector<float> y = read_back(x_device.tensor);
    const std::vector<double> want =
        testing::rope_reference(x, positions, n_heads, head_dim, base, style);
    Failures off;
    for (std::int64_t t = 0; t < n; ++t) {
      const double position = positions[std::size_t(t)];
      for (int h = 0; h < n_heads; ++h) {
        const auto head = std::size_t(t * width + h * head_dim);
        for (int i = 0; i < head_dim / 2; ++i) {
          const auto [a, b] = testing::rope_pair(style, head_dim, i);
          const double tolerance =
              (2e-6 + position * 0x1p-22) * (std::abs(x[head + a]) + std::abs(x[head + b])) + 1e-7;
          off.add(std::abs(y[head + a] - want[head + a]) <= tolerance &&
                      std::abs(y[head + b] - want[head + b]) <= tolerance,
                  [&] {
                    return "token " + std::to_string(t) + " head " + std::to_string(h) + " pair " +
                           std::to_string(i) + ": got (" + std::to_string(y[head + a]) + ", " +
                           std::to_string(y[head + b]) + "), want (" +
                           std::to_string(want[head + a]) + ", " + std::to_string(want[head + b]) +
                           ")";
                  });
        }
      }
    }
    EXPECT_EQ(off.count, 0) << "head_dim " << head_dim << " base " << base << " style "
                            << int(style) << ": " << off.first;
  }
}

TEST_P(ComputeConformance, SiluMulAddAndAddBias) {
  const std::shared_ptr<Compute> compute = backend().make_compute();
  std::mt19937 rng(7);
  const std::int64_t rows = 13, cols = 96;
  std::vector<float> gate = random_activations(std::size_t(rows * cols), rng);
  gate[0] = -100.0f;
  gate[1] = 90.0f;
  const std::vector<float> up = random_activations(gate.size(), rng);
  const std::vector<float> bias = random_activations(std::size_t(cols), rng);
  const DeviceRows gate_device = to_device(gate, rows, cols);
  const DeviceRows up_device = to_device(up, rows, cols);
  const DeviceRows bias_device = to_device(bias, 1, cols);

  compute->silu_mul(stream(), gate_device.tensor, up_device.tensor);
  const std::vector<float> silu = read_back(gate_device.tensor);
  for (std::size_t i = 0; i < gate.size(); ++i) {
    const double g = gate[i];
    const double want = g / (1.0 + std::exp(-g)) * up[i];
    ASSERT_NEAR(silu[i], want, 1e-5 * std::abs(want) + 1e-30) << "element " << i;
  }
  compute->add(stream(), gate_device.tensor, up_device.tensor);
  const std::vector<float> sum = read_back(gate_device.tensor);
  for (std::size_t i = 0; i < gate.size(); ++i)
    ASSERT_EQ(sum[i], silu[i] + up[i]) << "element " << i;
  compute->add_bias(stream(), gate_device.tensor, bias_device.tensor);
  const std::vector<float> biased = read_back(gate_device.tensor);
  for (std::size_t i = 0; i < gate.size(); ++i) {
    ASSERT_EQ(biased[i], sum[i] + bias[i % std::size_t(cols)]) << "element " << i;
  }
}

// BERT's LayerNorm (biased variance), with a row far from zero where E[x²] - mean² would lose
// the variance; into another tensor and in place.
TEST_P(ComputeConformance, LayerNormIntoAnotherTensorAndInPlace) {
  const std::shared_ptr<Compute> compute = backend().make_compute();
  std::mt19937 rng(8);
  const std::int64_t rows = 13, dim = 96;
  std::vector<float> x = random_activations(std::size_t(rows * dim), rng);
  for (std::int64_t j = 0; j < dim; ++j) x[std::size_t(dim + j)] += 1000.0f;
  const std::vector<float> weight = random_activations(std::size_t(dim), rng);
  const std::vector<float> bias = random_activations(std::size_t(dim), rng);
  const DeviceRows x_device = to_device(x, rows, dim);
  const DeviceRows weight_device = to_device(weight, 1, dim);
  const DeviceRows bias_device = to_device(bias, 1, dim);
  const DeviceRows out_device = device_floats(rows, dim);
  compute->layer_norm(stream(), x_device.tensor, weight_device.tensor, bias_device.tensor, 1e-12f,
                      out_device.tensor);
  const std::vector<float> out = read_back(out_device.tensor);
  compute->layer_norm(stream(), x_device.tensor, weight_device.tensor, bias_device.tensor, 1e-12f,
                      x_device.tensor);
  EXPECT_EQ(read_back(x_device.tensor), out);
  const testing::LayerNormReference ref =
      testing::layer_norm_reference(x, dim, weight, bias, 1e-12);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < dim; ++j) {
      const auto at = std::size_t(r * dim + j);
      // The offset row's mean, summed in float32, is off by about 6e-5 of its spread.
      const double tolerance = ref.tolerance(at, weight[std::size_t(j)], r == 1 ? 2e-3 : 1e-5);
      ASSERT_NEAR(out[at], ref.want[at], tolerance) << "row " << r << " column " << j;
    }
  }
}

// GELU in its exact (erf) form, tails included: large negative inputs give tiny outputs that
// must keep their relative precision.
TEST_P(ComputeConformance, GeluIsTheErfForm) {
  const std::shared_ptr<Compute> compute = backend().make_compute();
  std::mt19937 rng(9);
  std::vector<float> x = random_activations(13 * 96, rng);
  const float edges[] = {-30.0f, -9.0f, -5.5f, -3.0f, -1e-3f, 0.0f, 1e-3f, 3.0f, 9.0f, 30.0f};
  std::copy(std::begin(edges), std::end(edges), x.begin());
  const DeviceRows x_device = to_device(x, 13, 96);
  compute->gelu(stream(), x_device.tensor);
  const std::vector<float> y = read_back(x_device.tensor);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double want = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
    // exp(-x²/2) inside erfc inherits the float rounding of x²: relative error ~ x² ulp.
    ASSERT_NEAR(y[i], want, (1e-5 + 2e-7 * v * v) * std::abs(want) + 1e-30) << "x = " << v;
  }
}

// Every token attends to every token of its own sequence, per head: the reference is softmax
// attention over the sequence's rows of that head (reference.hpp).
TEST_P(ComputeConformance, EncoderAttentionStaysInsideEachSequence) {
  const std::shared_ptr<Compute> compute = backend().make_compute();
  std::mt19937 rng(10);
  const int n_heads = 3, head_dim = 32;
  const std::vector<std::int64_t> lengths = {5, 1, 33, 17};
  const std::int64_t tokens = std::accumulate(lengths.begin(), lengths.end(), std::int64_t(0));
  const std::int64_t width = std::int64_t(n_heads) * head_dim;
  const std::vector<float> q = random_activations(std::size_t(tokens * width), rng);
  const std::vector<float> k = random_activations(q.size(), rng);
  const std::vector<float> v = random_activations(q.size(), rng);
  const DeviceRows q_device = to_device(q, tokens, width);
  const DeviceRows k_device = to_device(k, tokens, width);
  const DeviceRows v_device = to_device(v, tokens, width);
  const DeviceRows out_device = device_floats(tokens, width);
  const float scale = 1.0f / std::sqrt(float(head_dim));
  compute->encoder_attention(stream(), q_device.tensor, k_device.tensor, v_device.tensor, lengths,
                             n_heads, head_dim, scale, out_device.tensor);
  const std::vector<float> out = read_back(out_device.tensor);
  std::int64_t first = 0;
  for (const std::int64_t length : lengths) {
    for (int h = 0; h < n_heads; ++h) {
      KvHeadSnapshot sequence;  // the sequence's keys and values of head h, in order
      for (std::int64_t t = first; t < first + length; ++t) {
        const auto at = std::ptrdiff_t(t * width + h * head_dim);
        sequence.keys.insert(sequence.keys.end(), k.begin() + at, k.begin() + at + head_dim);
        sequence.values.insert(sequence.values.end(), v.begin() + at, v.begin() + at + head_dim);
      }
      for (std::int64_t t = first; t < first + length; ++t) {
        const auto at = std::size_t(t * width + h * head_dim);
        const std::vector<double> want =
            attention_reference(sequence, std::span(q).subspan(at, head_dim), scale, length);
        EXPECT_LT(relative_error(std::span(out).subspan(at, head_dim), want), 2e-5)
            << "token " << t << " head " << h;
      }
    }
    first += length;
  }
}

// A shape that does not fit is an Error naming the operation and the operand.
TEST_P(ComputeConformance, ShapeErrorsNameTheOperationAndOperand) {
  const std::shared_ptr<Compute> compute = backend().make_compute();
  std::mt19937 rng(11);
  const Matrix m(TensorType::f32, 8, 64, rng);
  const std::unique_ptr<Weights> w = compute->upload(m.view());
  const DeviceRows x = device_floats(2, 64);
  const DeviceRows narrow = device_floats(2, 7);
  const DeviceRows narrow_row = device_floats(1, 7);
  auto expect_error = [&](auto&& call, const std::vector<std::string>& parts) {
    try {
      call();
      stream().synchronize();
      ADD_FAILURE() << "no Error, expected one naming " << parts[0];
    } catch (const Error& e) {
      for (const std::string& part : parts) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
            << "\"" << e.what() << "\" does not name " << part;
      }
    }
  };
  expect_error([&] { compute->matmul(stream(), *w, x.tensor, narrow.tensor); }, {"matmul", "y"});
  expect_error([&] { compute->matmul(stream(), *w, narrow.tensor, x.tensor); }, {"matmul", "x"});
  expect_error([&] { compute->rms_norm(stream(), x.tensor, narrow_row.tensor, 1e-5f, x.tensor); },
               {"rms_norm", "weight"});
  expect_error([&] { compute->add_bias(stream(), x.tensor, narrow_row.tensor); },
               {"add_bias", "bias"});
}

}  // namespace
}  // namespace cocktail::conformance
