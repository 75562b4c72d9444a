// How every backend checks a view against its own buffer (expect_inside_buffer, tensor.hpp).
#include "cocktail/tensor.hpp"

#include <gtest/gtest.h>

#include "cocktail/error.hpp"
#include "support/error_of.hpp"

namespace cocktail {
namespace {

using testing::error_of;

struct Bytes final : Buffer {
  std::size_t size() const override { return 64; }
};

TEST(TensorViews, LieInsideTheirBufferOnWholeElements) {
  Bytes memory;
  EXPECT_NO_THROW(expect_inside_buffer("copy", "src", {&memory, 0, ElementType::f32, 4, 4}, 64));
  EXPECT_NO_THROW(expect_inside_buffer("copy", "src", {&memory, 62, ElementType::f16, 1, 1}, 64));
  EXPECT_NO_THROW(expect_inside_buffer("copy", "src", {&memory, 64, ElementType::f32, 0, 4}, 64));
  EXPECT_EQ(error_of<Error>([&] {
              expect_inside_buffer("copy", "src", {&memory, 8, ElementType::f32, 4, 4}, 64);
            }),
            "copy: src (f32 [4 x 4] at byte 8) runs past the end of its 64-byte buffer");
  EXPECT_EQ(error_of<Error>([&] {
              expect_inside_buffer("copy", "dst", {&memory, 68, ElementType::f32, 0, 4}, 64);
            }),
            "copy: dst (f32 [0 x 4] at byte 68) runs past the end of its 64-byte buffer");
  EXPECT_THROW(expect_inside_buffer("copy", "src", {&memory, 0, ElementType::f32, -1, 4}, 64),
               Error);
  EXPECT_EQ(error_of<Error>([&] {
              expect_inside_buffer("copy", "src", {&memory, 2, ElementType::f32, 1, 4}, 64);
            }),
            "copy: src (f32 [1 x 4]) starts at byte 2, not a whole element");
}

}  // namespace
}  // namespace cocktail
