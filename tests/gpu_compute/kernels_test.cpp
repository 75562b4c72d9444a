// The compute kernels (backends/cuda/src/compute/*.cu) run on the CPU: compiled by the host
// compiler against tests/support/host_shim/, whose launches run each block's threads as host
// threads with real barriers and warp exchanges. Checked against float64 references from the
// definitions in compute.hpp, on shapes that leave every tile, unit and group partial. What this
// cannot show is the device's own behaviour (memory model, math library, speed): the conformance
// suite on a GPU does.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cocktail/dequantize.hpp"
#include "compute/elementwise_kernels.cuh"
#include "compute/encoder_attention_kernels.cuh"
#include "compute/encoder_tiles.hpp"
#include "compute/matmul_kernels.cuh"
#include "compute/norm_kernels.cuh"
#include "gpu_common/weight_layout.hpp"
#include "support/random_kv.hpp"
#include "support/random_weights.hpp"
#include "support/rope_reference.hpp"

namespace cocktail::gpu {
namespace {

using testing::Bytes;
using testing::put_half;
using testing::random_floats;
using testing::random_weights;

// A matrix converted as upload converts it, in host memory the emulated kernels read.
struct HostWeights {
  std::vector<double> values;  // [rows][cols], as dequantize_row gives them
  std::vector<float> floats;   // the same, as float
  Bytes units;
  std::vector<CodeGroup> groups;
  WeightRows view;

  HostWeights(TensorType type, std::int64_t rows, std::int64_t cols, std::mt19937& rng) {
    const Bytes file = random_weights(type, rows, cols, rng);
    const WeightView w{type, file.data(), rows, cols};
    floats.resize(std::size_t(rows * cols));
    for (std::int64_t r = 0; r < rows; ++r) {
      dequantize_row(type, file.data() + row_bytes(type, cols) * std::size_t(r), cols,
                     floats.data() + r * cols);
    }
    values.assign(floats.begin(), floats.end());
    const WeightFormat f = device_format(type);
    const std::int64_t per_row = units_per_row(f, cols);
    units.resize(std::size_t(rows * per_row * kWeightUnitBytes));
    groups.resize(has_groups(f) ? std::size_t(rows * per_row) : 0);
    convert_rows(w, 0, rows, units, groups);
    view = {f, units.data(), has_groups(f) ? groups.data() : nullptr, rows, cols, per_row};
  }
};

// Column counts of a type: whole blocks; for the float types also counts the padding and the
// scalar activation loads must complete.
std::vector<std::int64_t> columns_for(TensorType t) {
  const int block = info(t).block_elements;
  if (block == 1) return {45, 96};
  return {block == 256 ? 512 : 96};
}

// y = x · wᵀ against float64, where float32 accumulation leaves about 1e-7 of Σ|w·x|.
void expect_products(const HostWeights& w, const std::vector<float>& x, std::int64_t n,
                     const std::vector<float>& y) {
  const std::int64_t rows = w.view.rows, cols = w.view.cols;
  for (std::int64_t k = 0; k < n; ++k) {
    for (std::int64_t r = 0; r < rows; ++r) {
      double want = 0.0, magnitude = 0.0;
      for (std::int64_t j = 0; j < cols; ++j) {
        const double p = w.values[std::size_t(r * cols + j)] * x[std::size_t(k * cols + j)];
        want += p;
        magnitude += std::abs(p);
      }
      ASSERT_NEAR(y[std::size_t(k * rows + r)], want, 1e-6 * magnitude + 1e-7)
          << "token " << k << " row " << r;
    }
  }
}

TEST(EmulatedKernels, MatmulOfEveryWeightTypeByGemvAndGemm) {
  std::mt19937 rng(1);
  for (const TensorType t : testing::kAllWeightTypes) {
    for (const std::int64_t cols : columns_for(t)) {
      // The GEMV (up to 8 tokens) and the GEMM (two tiles of tokens), each with a partial last
      // block of rows.
      for (const auto& [rows, n] :
           {std::pair{45, 1}, std::pair{45, 8}, std::pair{70, 9}, std::pair{70, 70}}) {
        SCOPED_TRACE(std::string(to_string(t)) + " " + std::to_string(rows) + " x " +
                     std::to_string(cols) + ", n = " + std::to_string(n));
        const HostWeights w(t, rows, cols, rng);
        const std::vector<float> x = random_floats(std::size_t(n * cols), rng);
        std::vector<float> y(std::size_t(n * rows), NAN);
        const MatmulTarget target{w.view, y.data()};
        launch_matmul(nullptr, std::span(&target, 1), x.data(), n);
        expect_products(w, x, n, y);
      }
    }
  }
}

// Products of one input: runs of one format share a GEMV launch (up to kMaxGemvTargets), a
// change of format starts another; the GEMM takes each on its own.
TEST(EmulatedKernels, MatmulOfSeveralTargetsOfMixedFormats) {
  std::mt19937 rng(7);
  const std::int64_t cols = 256;
  const std::pair<TensorType, std::int64_t> shapes[] = {
      {TensorType::q4_k, 45}, {TensorType::q4_0, 20}, {TensorType::q4_1, 5}, {TensorType::q4_0, 33},
      {TensorType::q4_k, 9},  {TensorType::q6_k, 64}, {TensorType::f32, 7}};
  std::vector<HostWeights> weights;  // each view points into its own vectors: never copied
  weights.reserve(std::size(shapes));
  for (const auto& [type, rows] : shapes) weights.emplace_back(type, rows, cols, rng);
  for (const std::int64_t n : {1, 5, 12}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::vector<float> x = random_floats(std::size_t(n * cols), rng);
    std::vector<std::vector<float>> ys;
    std::vector<MatmulTarget> targets;
    for (const HostWeights& w : weights) ys.emplace_back(std::size_t(n * w.view.rows), NAN);
    for (std::size_t i = 0; i < weights.size(); ++i)
      targets.push_back({weights[i].view, ys[i].data()});
    launch_matmul(nullptr, targets, x.data(), n);
    for (std::size_t i = 0; i < weights.size(); ++i) {
      SCOPED_TRACE("target " + std::to_string(i));
      expect_products(weights[i], x, n, ys[i]);
    }
  }
}

TEST(EmulatedKernels, EmbeddingCopiesRowsAndGivesNaNForIdsOutsideTheTable) {
  std::mt19937 rng(2);
  const std::vector<int> ids = {3, 0, 49, -1, 17, 50, 3};
  for (const TensorType t : testing::kAllWeightTypes) {
    SCOPED_TRACE(std::string(to_string(t)));
    const std::int64_t cols = columns_for(t)[0];
    const HostWeights table(t, 50, cols, rng);
    std::vector<float> out(ids.size() * std::size_t(cols), 0.0f);
    launch_embedding(nullptr, table.view, ids.data(), std::int64_t(ids.size()), out.data());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      for (std::int64_t j = 0; j < cols; ++j) {
        const float got = out[i * std::size_t(cols) + std::size_t(j)];
        if (ids[i] < 0 || ids[i] >= 50) {
          ASSERT_TRUE(std::isnan(got)) << "id " << ids[i] << " column " << j;
        } else {
          ASSERT_EQ(got, table.floats[std::size_t(ids[i] * cols + j)])
              << "id " << ids[i] << " column " << j;
        }
      }
    }
  }
}

TEST(EmulatedKernels, RmsNormAndLayerNormInPlaceAndNot) {
  std::mt19937 rng(3);
  const std::int64_t rows = 5, cols = 300;  // more columns than a block has threads
  std::vector<float> x = random_floats(std::size_t(rows * cols), rng);
  for (std::int64_t j = 0; j < cols; ++j) x[std::size_t(cols + j)] += 1000.0f;
  const std::vector<float> weight = random_floats(std::size_t(cols), rng);
  const std::vector<float> bias = random_floats(std::size_t(cols), rng);

  std::vector<float> out(x.size());
  launch_rms_norm(nullptr, x.data(), weight.data(), rows, cols, 1e-5f, out.data());
  std::vector<float> in_place = x;
  launch_rms_norm(nullptr, in_place.data(), weight.data(), rows, cols, 1e-5f, in_place.data());
  EXPECT_EQ(in_place, out);
  for (std::int64_t r = 0; r < rows; ++r) {
    double squares = 0.0;
    for (std::int64_t j = 0; j < cols; ++j)
      squares += double(x[std::size_t(r * cols + j)]) * x[std::size_t(r * cols + j)];
    const double inverse = 1.0 / std::sqrt(squares / double(cols) + 1e-5);
    for (std::int64_t j = 0; j < cols; ++j) {
      const double want = x[std::size_t(r * cols + j)] * inverse * weight[std::size_t(j)];
      ASSERT_NEAR(out[std::size_t(r * cols + j)], want, 1e-5 * (std::abs(want) + 1e-3));
    }
  }

  launch_layer_norm(nullptr, x.data(), weight.data(), bias.data(), rows, cols, 1e-12f, out.data());
  in_place = x;
  launch_layer_norm(nullptr, in_place.data(), weight.data(), bias.data(), rows, cols, 1e-12f,
                    in_place.data());
  EXPECT_EQ(in_place, out);
  for (std::int64_t r = 0; r < rows; ++r) {
    double mean = 0.0, variance = 0.0;
    for (std::int64_t j = 0; j < cols; ++j) mean += x[std::size_t(r * cols + j)];
    mean /= double(cols);
    for (std::int64_t j = 0; j < cols; ++j) {
      const double d = x[std::size_t(r * cols + j)] - mean;
      variance += d * d;
    }
    const double inverse = 1.0 / std::sqrt(variance / double(cols) + 1e-12);
    for (std::int64_t j = 0; j < cols; ++j) {
      const double normalized = (x[std::size_t(r * cols + j)] - mean) * inverse;
      const double want = normalized * weight[std::size_t(j)] + bias[std::size_t(j)];
      // The offset row's mean, summed in float32, moves its values by ~1e-4 of their spread.
      const double tolerance =
          (r == 1 ? 2e-3 : 1e-5) * (std::abs(normalized * weight[std::size_t(j)]) + 1.0);
      ASSERT_NEAR(out[std::size_t(r * cols + j)], want, tolerance)
          << "row " << r << " column " << j;
    }
  }
}

TEST(EmulatedKernels, RopeRotatesEachStylesPairsByPosition) {
  std::mt19937 rng(4);
  const std::vector<int> positions = {0, 1, 7, 513, 8191};
  const auto n = std::int64_t(positions.size());
  for (const auto& [n_heads, head_dim, base, style] :
       {std::tuple{3, 64, 10000.0f, RopeStyle::adjacent_pairs},
        std::tuple{2, 32, 500000.0f, RopeStyle::adjacent_pairs},
        std::tuple{2, 128, 1e6f, RopeStyle::halves}}) {
    const std::int64_t width = std::int64_t(n_heads) * head_dim;
    const std::vector<float> x = random_floats(std::size_t(n * width), rng);
    std::vector<float> y = x;
    launch_rope(nullptr, y.data(), positions.data(), n, n_heads, head_dim, base, style);
    const std::vector<double> want =
        testing::rope_reference(x, positions, n_heads, head_dim, base, style);
    for (std::int64_t t = 0; t < n; ++t) {
      for (int h = 0; h < n_heads; ++h) {
        const auto head = std::size_t(t * width + h * head_dim);
        for (int i = 0; i < head_dim / 2; ++i) {
          const double position = positions[std::size_t(t)];
          const auto [a, b] = testing::rope_pair(style, head_dim, i);
          const double tolerance =
              (2e-6 + position * 0x1p-22) * (std::abs(x[head + a]) + std::abs(x[head + b])) + 1e-7;
          ASSERT_NEAR(y[head + a], want[head + a], tolerance);
          ASSERT_NEAR(y[head + b], want[head + b], tolerance);
        }
      }
    }
  }
}

TEST(EmulatedKernels, ElementwiseOps) {
  std::mt19937 rng(5);
  const std::int64_t rows = 7, cols = 45;
  std::vector<float> gate = random_floats(std::size_t(rows * cols), rng, 3.0f);
  gate[0] = -100.0f;
  gate[1] = 90.0f;
  const std::vector<float> up = random_floats(gate.size(), rng);
  const std::vector<float> bias = random_floats(std::size_t(cols), rng);
  std::vector<float> y = gate;
  launch_silu_mul(nullptr, y.data(), up.data(), std::int64_t(y.size()));
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double g = gate[i];
    const double want = g / (1.0 + std::exp(-g)) * up[i];
    ASSERT_NEAR(y[i], want, 1e-5 * std::abs(want) + 1e-30) << "element " << i;
  }
  std::vector<float> sum = y;
  launch_add(nullptr, sum.data(), up.data(), std::int64_t(sum.size()));
  for (std::size_t i = 0; i < y.size(); ++i) ASSERT_EQ(sum[i], y[i] + up[i]);
  std::vector<float> biased = sum;
  launch_add_bias(nullptr, biased.data(), bias.data(), rows, cols);
  for (std::size_t i = 0; i < y.size(); ++i)
    ASSERT_EQ(biased[i], sum[i] + bias[i % std::size_t(cols)]);
  std::vector<float> g = gate;
  g[2] = -30.0f;
  g[3] = -9.0f;
  g[4] = -5.5f;
  launch_gelu(nullptr, g.data(), std::int64_t(g.size()));
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double v = i >= 2 && i <= 4 ? double(std::array{-30.0f, -9.0f, -5.5f}[i - 2]) : gate[i];
    const double want = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
    ASSERT_NEAR(g[i], want, (1e-5 + 2e-7 * v * v) * std::abs(want) + 1e-30) << "x = " << v;
  }
}

// Softmax attention inside each sequence, per head, against float64; head sizes on both sides
// of the kernel's two register footprints, sequences shorter and longer than a tile and a chunk.
TEST(EmulatedKernels, EncoderAttentionStaysInsideEachSequence) {
  std::mt19937 rng(6);
  const std::vector<std::int64_t> lengths = {5, 1, 33, 70};
  const std::int64_t tokens = std::accumulate(lengths.begin(), lengths.end(), std::int64_t(0));
  for (const auto& [n_heads, head_dim] : {std::pair{3, 32}, std::pair{2, 80}}) {
    SCOPED_TRACE("head_dim " + std::to_string(head_dim));
    const std::int64_t width = std::int64_t(n_heads) * head_dim;
    const std::vector<float> q = random_floats(std::size_t(tokens * width), rng);
    const std::vector<float> k = random_floats(q.size(), rng);
    const std::vector<float> v = random_floats(q.size(), rng);
    std::vector<float> out(q.size(), NAN);
    const float scale = 1.0f / std::sqrt(float(head_dim));
    for_each_encoder_launch(lengths, [&](const EncoderLaunch& launch) {
      launch_encoder_attention(nullptr, launch, q.data(), k.data(), v.data(), n_heads, head_dim,
                               scale, out.data());
    });
    std::int64_t first = 0;
    for (const std::int64_t length : lengths) {
      for (int h = 0; h < n_heads; ++h) {
        for (std::int64_t t = first; t < first + length; ++t) {
          std::vector<double> p(static_cast<std::size_t>(length));
          double top = -INFINITY, total = 0.0;
          for (std::int64_t s = 0; s < length; ++s) {
            double dot = 0.0;
            for (int d = 0; d < head_dim; ++d) {
              dot += double(q[std::size_t(t * width + h * head_dim + d)]) *
                     k[std::size_t((first + s) * width + h * head_dim + d)];
            }
            p[std::size_t(s)] = dot * scale;
            top = std::max(top, p[std::size_t(s)]);
          }
          for (double& e : p) total += (e = std::exp(e - top));
          for (int d = 0; d < head_dim; ++d) {
            double want = 0.0;
            for (std::int64_t s = 0; s < length; ++s) {
              want += p[std::size_t(s)] / total *
                      v[std::size_t((first + s) * width + h * head_dim + d)];
            }
            ASSERT_NEAR(out[std::size_t(t * width + h * head_dim + d)], want, 2e-5)
                << "token " << t << " head " << h << " dim " << d;
          }
        }
      }
      first += length;
    }
  }
}

}  // namespace
}  // namespace cocktail::gpu
