// The operand rules every Compute applies before it enqueues work (compute_checks.hpp): each
// refusal names the operation and the operand.
#include "cocktail/compute_checks.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "support/error_of.hpp"

namespace cocktail {
namespace {

using testing::error_of;

struct NoMemory final : Buffer {
  std::size_t size() const override { return 0; }
};

struct Shape final : Weights {
  Shape(std::int64_t rows, std::int64_t cols) : Weights(rows, cols) {}
};

NoMemory memory;

Tensor f32(std::int64_t rows, std::int64_t cols) {
  return {&memory, 0, ElementType::f32, rows, cols};
}

Tensor i32(std::int64_t rows, std::int64_t cols) {
  return {&memory, 0, ElementType::i32, rows, cols};
}

// The message names every one of `parts`.
void expect_names(const std::string& message, const std::vector<std::string>& parts) {
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "\"" << message << "\" lacks " << part;
  }
}

TEST(ComputeChecks, WeightViewsNeedAShapeBytesAndWholeBlocks) {
  const std::byte bytes[64] = {};
  EXPECT_NO_THROW(check_weight_view("upload", {TensorType::q8_0, bytes, 1, 32}));
  expect_names(error_of<Error>([&] {
                 check_weight_view("upload", {TensorType::f32, nullptr, 1, 4});
               }),
               {"upload", "empty weights"});
  expect_names(error_of<Error>([&] {
                 check_weight_view("upload", {TensorType::q4_0, bytes, 1, 48});
               }),
               {"upload", "q4_0", "48", "32-element blocks"});
}

TEST(ComputeChecks, MatmulAndEmbeddingShapes) {
  const Shape w(8, 64);
  EXPECT_NO_THROW(check_matmul("matmul", w, f32(3, 64), f32(3, 8)));
  EXPECT_NO_THROW(check_matmul("matmul", w, f32(0, 64), f32(0, 8)));
  expect_names(error_of<Error>([&] { check_matmul("matmul", w, f32(2, 7), f32(2, 8)); }),
               {"matmul", "x", "[2 x 7]", "[2 x 64]"});
  expect_names(error_of<Error>([&] { check_matmul("matmul", w, f32(2, 64), f32(2, 7)); }),
               {"matmul", "y"});
  expect_names(error_of<Error>([&] { check_matmul("matmul", w, i32(2, 64), f32(2, 8)); }),
               {"matmul", "x", "i32"});
  EXPECT_NO_THROW(check_embedding(w, i32(5, 1), f32(5, 64)));
  expect_names(error_of<Error>([&] { check_embedding(w, f32(5, 1), f32(5, 64)); }),
               {"embedding", "ids"});
  expect_names(error_of<Error>([&] { check_embedding(w, i32(5, 1), f32(4, 64)); }),
               {"embedding", "out"});
}

TEST(ComputeChecks, NormsElementwiseAndRope) {
  EXPECT_NO_THROW(check_rms_norm(f32(2, 8), f32(1, 8), f32(2, 8)));
  expect_names(error_of<Error>([&] { check_rms_norm(f32(2, 8), f32(1, 7), f32(2, 8)); }),
               {"rms_norm", "weight"});
  expect_names(error_of<Error>([&] { check_rms_norm(f32(2, 0), f32(1, 0), f32(2, 0)); }),
               {"rms_norm", "x", "no columns"});
  expect_names(
      error_of<Error>([&] { check_layer_norm(f32(2, 8), f32(1, 8), f32(2, 8), f32(2, 8)); }),
      {"layer_norm", "bias"});
  expect_names(
      error_of<Error>([&] { check_layer_norm(f32(2, 8), f32(1, 8), f32(1, 8), f32(8, 2)); }),
      {"layer_norm", "out"});
  expect_names(error_of<Error>([&] { check_same_shape("silu_mul", "up", f32(2, 7), f32(2, 8)); }),
               {"silu_mul", "up"});
  expect_names(error_of<Error>([&] { check_add_bias(f32(2, 8), f32(2, 8)); }),
               {"add_bias", "bias"});
  EXPECT_NO_THROW(check_rope(f32(3, 128), i32(3, 1), 2, 64, 10000.0f));
  expect_names(error_of<Error>([&] { check_rope(f32(3, 128), i32(3, 1), 2, 63, 10000.0f); }),
               {"rope", "head_dim 63"});
  expect_names(error_of<Error>([&] { check_rope(f32(3, 128), i32(2, 1), 2, 64, 10000.0f); }),
               {"rope", "x"});
  expect_names(error_of<Error>([&] { check_rope(f32(3, 128), i32(3, 2), 2, 64, 10000.0f); }),
               {"rope", "positions"});
}

TEST(ComputeChecks, EncoderAttentionBatches) {
  const std::vector<std::int64_t> lengths = {3, 5};
  EXPECT_EQ(check_encoder_batch(lengths, 2, 4), 8);
  EXPECT_EQ(check_encoder_attention(f32(8, 8), f32(8, 8), f32(8, 8), lengths, 2, 4, f32(8, 8)), 8);
  const std::vector<std::int64_t> empty_sequence = {3, 0};
  expect_names(error_of<Error>([&] { check_encoder_batch(empty_sequence, 2, 4); }),
               {"encoder_attention", "sequence 1"});
  expect_names(error_of<Error>([&] {
                 check_encoder_attention(f32(8, 8), f32(7, 8), f32(8, 8), lengths, 2, 4, f32(8, 8));
               }),
               {"encoder_attention", "k"});
}

}  // namespace
}  // namespace cocktail
