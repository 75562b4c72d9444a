// The safetensors reader on small files the test writer makes: what a valid file holds, and a
// cocktail::Error naming the tensor, field and offset for each kind of corruption.
#include "cocktail/models/safetensors_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "cocktail/error.hpp"
#include "safetensors_writer.hpp"
#include "support/error_of.hpp"

namespace cocktail::models {
namespace {

using ::testing::AllOf;
using testing::Bytes;
using testing::error_of;
using ::testing::HasSubstr;
using testing::SafetensorsEntry;

Bytes bytes_of(std::initializer_list<std::uint8_t> values) {
  Bytes out;
  for (const std::uint8_t v : values) out.push_back(std::byte(v));
  return out;
}

class SafetensorsTest : public ::testing::Test {
 protected:
  std::string open_error(const Bytes& bytes) {
    const auto path = dir_.write("broken.safetensors", bytes);
    return error_of<Error>([&] { SafetensorsFile{path}; });
  }

  testing::TempDir dir_;
};

TEST_F(SafetensorsTest, ReadsTensorsAndMetadata) {
  const std::vector<float> matrix = {1.5f, -2.0f, 0.25f, 3.0f, 4.0f, -0.5f};
  const auto path =
      dir_.write("ok.safetensors",
                 testing::safetensors_file(
                     {{"b.matrix", "F32", {2, 3}, testing::f32_bytes(matrix)},
                      {"a.half", "F16", {2}, bytes_of({0x00, 0x3C, 0x00, 0xC0})},  // 1.0, -2.0
                      {"c.ids", "I64", {1, 2}, Bytes(16, std::byte{7})},
                      {"d.empty", "BF16", {0, 4}, {}}},
                     {{"format", "pt"}}));
  const SafetensorsFile file(path);
  EXPECT_EQ(file.metadata(), (std::map<std::string, std::string>{{"format", "pt"}}));
  ASSERT_EQ(file.tensors().size(), 4u);
  EXPECT_EQ(file.tensors()[0].name, "a.half");  // sorted by name
  EXPECT_EQ(file.find("missing"), nullptr);

  const SafetensorsTensor& m = file.tensor("b.matrix");
  EXPECT_EQ(m.dtype, "F32");
  EXPECT_EQ(m.float_type(), TensorType::f32);
  EXPECT_EQ(m.shape, (std::vector<std::int64_t>{2, 3}));
  ASSERT_EQ(m.data.size(), 24u);
  float read[6];
  std::memcpy(read, m.data.data(), sizeof read);
  EXPECT_EQ(std::vector<float>(read, read + 6), matrix);
  EXPECT_EQ(m.offset, file.data_offset());
  EXPECT_EQ(file.data_offset() % 8, 0u);

  const SafetensorsTensor& h = file.tensor("a.half");
  EXPECT_EQ(h.float_type(), TensorType::f16);
  EXPECT_EQ(h.offset, file.data_offset() + 24);
  EXPECT_EQ(std::to_integer<int>(h.data[1]), 0x3C);
  EXPECT_EQ(file.tensor("c.ids").float_type(), std::nullopt);
  EXPECT_EQ(file.tensor("d.empty").float_type(), TensorType::bf16);
  EXPECT_TRUE(file.tensor("d.empty").data.empty());

  EXPECT_THAT(error_of<Error>([&] { file.tensor("encoder.missing"); }),
              AllOf(HasSubstr("ok.safetensors"), HasSubstr("tensor 'encoder.missing' is missing")));
}

TEST_F(SafetensorsTest, ShortFileOrHeaderPastTheEnd) {
  EXPECT_THAT(open_error(Bytes(5)), HasSubstr("file of 5 bytes is shorter than the 8-byte header"));
  Bytes header_too_long = testing::safetensors_raw("{}", {});
  testing::put_u64(header_too_long, 0, 1000);
  EXPECT_THAT(open_error(header_too_long),
              HasSubstr("header length 1000 (bytes 0 to 8) runs past the end of the file of 16"));
  Bytes huge = testing::safetensors_raw("{}", {});
  testing::put_u64(huge, 0, ~std::uint64_t(0));
  EXPECT_THAT(open_error(huge), HasSubstr("runs past the end of the file"));
}

TEST_F(SafetensorsTest, HeaderNotJsonOrNotAnObject) {
  EXPECT_THAT(open_error(testing::safetensors_raw("{\"a\": ", {})),
              AllOf(HasSubstr("the JSON header (file bytes 8 to 16) does not parse")));
  EXPECT_THAT(open_error(testing::safetensors_raw("[1, 2]", {})),
              HasSubstr("the JSON header is not an object"));
  EXPECT_THAT(open_error(testing::safetensors_raw(R"({"__metadata__": {"a": 1}})", {})),
              HasSubstr("__metadata__ field 'a' is not a string"));
}

TEST_F(SafetensorsTest, OffsetsOutsideTheDataArea) {
  const Bytes data(16);
  EXPECT_THAT(open_error(testing::safetensors_raw(
                  R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})", data)),
              AllOf(HasSubstr("tensor 'w': data_offsets [8, 24]"),
                    HasSubstr("lie outside the data area of 16 bytes at file offset 72")));
  EXPECT_THAT(open_error(testing::safetensors_raw(
                  R"({"w": {"dtype": "F32", "shape": [0], "data_offsets": [12, 8]}})", data)),
              HasSubstr("tensor 'w': data_offsets [12, 8]"));
  EXPECT_THAT(open_error(testing::safetensors_raw(
                  R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0]}})", data)),
              HasSubstr("tensor 'w': data_offsets has 1 entries; expected [begin, end]"));
  EXPECT_THAT(open_error(testing::safetensors_raw(
                  R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}})", data)),
              HasSubstr("tensor 'w': field 'data_offsets' holds -4; expected non-negative"));
}

TEST_F(SafetensorsTest, ShapeAndDtypeMustFillTheByteRange) {
  const Bytes data(16);
  // 3 F32 = 12 bytes, but the range holds 16.
  EXPECT_THAT(open_error(testing::safetensors_raw(
                  R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}})", data)),
              AllOf(HasSubstr("tensor 'w': shape [3] of F32 needs 12 bytes"),
                    HasSubstr("data_offsets [0, 16] hold 16 (file offset 72)")));
  // F16 of 4 elements is 8 bytes; BF16 and I64 likewise counted.
  EXPECT_THAT(open_error(testing::safetensors_raw(
                  R"({"w": {"dtype": "I64", "shape": [4], "data_offsets": [0, 16]}})", data)),
              HasSubstr("shape [4] of I64 needs 32 bytes"));
  // A product that would overflow 64 bits is caught before it is formed.
  EXPECT_THAT(
      open_error(testing::safetensors_raw(
          R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 16]}})",
          data)),
      HasSubstr("shape [4294967296, 4294967296] of F32 needs over 2^64 bytes"));
  EXPECT_THAT(open_error(testing::safetensors_raw(
                  R"({"w": {"dtype": "F24", "shape": [4], "data_offsets": [0, 12]}})", data)),
              HasSubstr("tensor 'w': unknown dtype 'F24'"));
  EXPECT_THAT(open_error(testing::safetensors_raw(
                  R"({"w": {"shape": [4], "data_offsets": [0, 16]}})", data)),
              HasSubstr("tensor 'w': field 'dtype' is missing or not a string"));
  EXPECT_THAT(open_error(testing::safetensors_raw(
                  R"({"w": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 16]}})", data)),
              HasSubstr("tensor 'w': field 'shape' holds 2.5"));
  EXPECT_THAT(open_error(testing::safetensors_raw(R"({"w": [1]})", data)),
              HasSubstr("tensor 'w': header entry is not an object"));
}

}  // namespace
}  // namespace cocktail::models
