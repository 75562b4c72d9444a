// The Vulkan Compute beyond the conformance suite's shapes: the GEMV and the tiled GEMM over
// token counts and matrix sizes that end inside their tiles, weights cut into several slabs (as
// matrices larger than one storage binding are), quantized ones with their groups among them,
// and weights kept with their file's values.

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cocktail/dequantize.hpp"
#include "cocktail/float16.hpp"
#include "compute/vulkan_compute.hpp"
#include "compute/vulkan_weights.hpp"
#include "support/random_kv.hpp"
#include "vulkan_fixture.hpp"

namespace cocktail::vulkan::testing {
namespace {

using cocktail::testing::random_floats;

WeightView view_of(const std::vector<float>& w, std::int64_t rows, std::int64_t cols) {
  return {TensorType::f32, reinterpret_cast<const std::byte*>(w.data()), rows, cols};
}

// A rows x cols matrix of `type` (q8_0 or q4_k) as a file stores it: random code bytes, with
// each block's FP16 scale (and Q4_K's minimum scale) set to a small value.
std::vector<std::byte> random_blocks(TensorType type, std::int64_t rows, std::int64_t cols,
                                     std::mt19937& rng) {
  std::vector<std::byte> b(row_bytes(type, cols) * std::size_t(rows));
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::byte& x : b) x = std::byte(byte(rng));
  const auto scale = std::bit_cast<std::uint16_t>(static_cast<Float16>(1.0f / 512));
  const std::size_t halves = type == TensorType::q4_k ? 2 : 1;  // d, and Q4_K's dmin
  for (std::size_t at = 0; at < b.size(); at += std::size_t(info(type).block_bytes)) {
    for (std::size_t h = 0; h < halves; ++h) std::memcpy(b.data() + at + 2 * h, &scale, 2);
  }
  return b;
}

// The values `view` decodes to, [rows][cols].
std::vector<float> decoded(const WeightView& view) {
  std::vector<float> w(std::size_t(view.rows * view.cols));
  for (std::int64_t r = 0; r < view.rows; ++r) {
    dequantize_row(view.type, view.data + row_bytes(view.type, view.cols) * std::size_t(r),
                   view.cols, w.data() + r * view.cols);
  }
  return w;
}

class VulkanComputeTest : public VulkanTest {
 protected:
  // y = x · wᵀ on the device, checked against float64 (float32 sums of the weights' values).
  void expect_matmul(const Weights& uploaded, const std::vector<float>& w, std::int64_t n,
                     std::mt19937& rng) {
    const std::int64_t rows = uploaded.rows(), cols = uploaded.cols();
    const std::vector<float> x = random_floats(std::size_t(n * cols), rng);
    const DeviceRows xd = to_device(x, n, cols);
    const DeviceRows yd = device_rows(backend(), std::size_t(n * rows), n, rows, "y");
    compute_->matmul(stream(), uploaded, xd.tensor, yd.tensor);
    const std::vector<float> y = read_back(yd.tensor);
    for (std::int64_t t = 0; t < n; ++t) {
      for (std::int64_t r = 0; r < rows; ++r) {
        double want = 0.0, magnitude = 0.0;
        for (std::int64_t c = 0; c < cols; ++c) {
          const double product =
              double(w[std::size_t(r * cols + c)]) * x[std::size_t(t * cols + c)];
          want += product;
          magnitude += std::abs(product);
        }
        ASSERT_NEAR(y[std::size_t(t * rows + r)], want, 1e-5 * magnitude + 1e-6)
            << rows << "x" << cols << " n=" << n << " token " << t << " row " << r;
      }
    }
  }

  // An i32 column of `ids` on the device.
  DeviceRows ids_to_device(const std::vector<std::int32_t>& ids) {
    DeviceRows device;
    const TensorRequest request{&device.tensor, ElementType::i32, std::int64_t(ids.size()), 1};
    device.memory = allocate_tensors(backend(), std::span(&request, 1));
    upload(stream(), std::span<const std::int32_t>(ids), device.tensor);
    return device;
  }

  std::shared_ptr<Compute> compute_;

  void SetUp() override {
    VulkanTest::SetUp();
    if (!IsSkipped() && !HasFatalFailure()) compute_ = backend().make_compute();
  }
};

// Token counts around the GEMV's limit (8) and the tile's 32; rows around the tile's 64 and
// the GEMV's 4; columns that end inside a 16-byte word and inside a 32-column stage.
TEST_F(VulkanComputeTest, MatmulOverShapesThatEndInsideTiles) {
  std::mt19937 rng(1);
  for (const auto& [rows, cols] :
       {std::pair<std::int64_t, std::int64_t>{1, 8}, {45, 20}, {130, 96}, {67, 203}}) {
    const std::vector<float> w = random_floats(std::size_t(rows * cols), rng);
    const std::unique_ptr<Weights> uploaded = compute_->upload(view_of(w, rows, cols));
    for (const std::int64_t n : {1, 3, 8, 9, 33, 70}) expect_matmul(*uploaded, w, n, rng);
  }
}

// A matrix in slabs of 7 rows (the last one short), each slab with its own groups, gives the
// same products and embeddings as in one piece: f32, and both code formats.
TEST_F(VulkanComputeTest, WeightsInSeveralSlabs) {
  std::mt19937 rng(2);
  const std::int64_t rows = 45;
  const std::vector<std::int32_t> ids = {44, 0, 6, 7, 13, 14, 43, 21};
  const DeviceRows ids_device = ids_to_device(ids);
  for (const TensorType type : {TensorType::f32, TensorType::q8_0, TensorType::q4_k}) {
    SCOPED_TRACE(std::string(to_string(type)));
    const std::int64_t cols = type == TensorType::f32 ? 40 : 2 * info(type).block_elements;
    const std::vector<float> floats = random_floats(std::size_t(rows * cols), rng);
    const std::vector<std::byte> blocks =
        type == TensorType::f32 ? std::vector<std::byte>() : random_blocks(type, rows, cols, rng);
    const WeightView view = type == TensorType::f32 ? view_of(floats, rows, cols)
                                                    : WeightView{type, blocks.data(), rows, cols};
    const std::vector<float> w = decoded(view);
    const std::unique_ptr<VulkanWeights> slabs =
        upload_weights(backend().vulkan_device(), view, 7, compute_.get());
    ASSERT_EQ(slabs->slabs().size(), 7u);
    for (const std::int64_t n : {2, 12}) expect_matmul(*slabs, w, n, rng);

    const DeviceRows out = device_rows(backend(), ids.size() * std::size_t(cols),
                                       std::int64_t(ids.size()), cols, "out");
    compute_->embedding(stream(), *slabs, ids_device.tensor, out.tensor);
    const std::vector<float> rows_out = read_back(out.tensor);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      for (std::int64_t c = 0; c < cols; ++c) {
        ASSERT_EQ(rows_out[i * std::size_t(cols) + std::size_t(c)],
                  w[std::size_t(ids[i] * cols + c)])
            << "id " << ids[i] << " column " << c;
      }
    }
  }
}

// Weights are kept as the file has them, not rounded to a narrower type: values beyond FP16's
// range and below its precision come back exactly.
TEST_F(VulkanComputeTest, WeightsKeepTheirFileValues) {
  std::vector<float> w(16, 1.0f);
  w[11] = 1e6f;
  w[12] = 1.0f + 0x1p-20f;
  const std::unique_ptr<Weights> uploaded = compute_->upload(view_of(w, 2, 8));
  const DeviceRows ids = ids_to_device({1});
  const DeviceRows out = device_rows(backend(), 8, 1, 8, "out");
  compute_->embedding(stream(), *uploaded, ids.tensor, out.tensor);
  const std::vector<float> row = read_back(out.tensor);
  EXPECT_EQ(row[3], 1e6f);
  EXPECT_EQ(row[4], 1.0f + 0x1p-20f);
}

}  // namespace
}  // namespace cocktail::vulkan::testing
