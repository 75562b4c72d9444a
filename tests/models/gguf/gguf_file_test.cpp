#include "cocktail/models/gguf_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "gguf_writer.hpp"
#include "support/error_of.hpp"

namespace cocktail::models {
namespace {

namespace fs = std::filesystem;
using cocktail::testing::error_of;
using cocktail::testing::GgufLayout;
using cocktail::testing::GgufWriter;
using cocktail::testing::TempDir;
using cocktail::testing::TestTensor;
using V = cocktail::testing::TestValue;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace id = cocktail::testing;

class GgufFileTest : public ::testing::Test {
 protected:
  fs::path write(const GgufWriter& writer, GgufLayout* layout = nullptr) {
    return dir_.write("model.gguf", writer.bytes(layout));
  }
  std::string open_error(const GgufWriter& writer) {
    const fs::path file = write(writer);
    return error_of<Error>([&] { GgufFile{file}; });
  }

  TempDir dir_;
};

TEST_F(GgufFileTest, ReadsEveryScalarType) {
  GgufWriter w;
  w.add("u8", V::u8(255))
      .add("i8", V::i8(-128))
      .add("u16", V::u16(65535))
      .add("i16", V::i16(-32768))
      .add("u32", V::u32(4294967295u))
      .add("i32", V::i32(std::numeric_limits<std::int32_t>::min()))
      .add("u64", V::u64(std::numeric_limits<std::uint64_t>::max()))
      .add("i64", V::i64(std::numeric_limits<std::int64_t>::min()))
      .add("f32", V::f32(1.5f))
      .add("f64", V::f64(-2.25e300))
      .add("yes", V::boolean(true))
      .add("no", V::boolean(false))
      .add("name", V::string("llama"))
      .add("empty", V::string(""))
      .add("utf8", V::string("\xc4\xa0t caf\xc3\xa9"));
  const GgufFile f(write(w));

  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  ASSERT_EQ(f.metadata().size(), 15u);
  EXPECT_EQ(f.metadata()[0].key, "u8");  // file order
  EXPECT_EQ(f.metadata()[14].key, "utf8");
  EXPECT_TRUE(f.tensors().empty());

  EXPECT_EQ(f.value("u8").type(), GgufValueType::u8);
  EXPECT_EQ(f.value("i8").type(), GgufValueType::i8);
  EXPECT_EQ(f.value("u16").type(), GgufValueType::u16);
  EXPECT_EQ(f.value("i16").type(), GgufValueType::i16);
  EXPECT_EQ(f.value("u32").type(), GgufValueType::u32);
  EXPECT_EQ(f.value("i32").type(), GgufValueType::i32);
  EXPECT_EQ(f.value("u64").type(), GgufValueType::u64);
  EXPECT_EQ(f.value("i64").type(), GgufValueType::i64);
  EXPECT_EQ(f.value("f32").type(), GgufValueType::f32);
  EXPECT_EQ(f.value("f64").type(), GgufValueType::f64);
  EXPECT_EQ(f.value("yes").type(), GgufValueType::boolean);
  EXPECT_EQ(f.value("name").type(), GgufValueType::string);

  EXPECT_EQ(f.value("u8").as_integer<std::uint8_t>(), 255);
  EXPECT_EQ(f.value("i8").as_integer<std::int8_t>(), -128);
  EXPECT_EQ(f.value("u16").as_integer<std::uint16_t>(), 65535);
  EXPECT_EQ(f.value("i16").as_integer<std::int16_t>(), -32768);
  EXPECT_EQ(f.get_u32("u32"), 4294967295u);
  EXPECT_EQ(f.get_i32("i32"), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(f.get_u64("u64"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(f.get_i64("i64"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(f.get_f32("f32"), 1.5f);
  EXPECT_EQ(f.get_f64("f64"), -2.25e300);
  EXPECT_TRUE(f.get_bool("yes"));
  EXPECT_FALSE(f.get_bool("no"));
  EXPECT_EQ(f.get_string("name"), "llama");
  EXPECT_EQ(f.get_string("empty"), "");
  EXPECT_EQ(f.get_string("utf8"), "\xc4\xa0t caf\xc3\xa9");
  EXPECT_EQ(f.value("name").as_string(), "llama");

  EXPECT_EQ(f.value("u32").to_text(), "4294967295");
  EXPECT_EQ(f.value("f32").to_text(), "1.5");
  EXPECT_EQ(f.value("f64").to_text(), "-2.25e+300");
  EXPECT_EQ(f.value("yes").to_text(), "true");
  EXPECT_EQ(f.value("name").to_text(), "\"llama\"");
  EXPECT_EQ(f.value("utf8").to_text(), "\"\\xc4\\xa0t caf\\xc3\\xa9\"");
}

TEST_F(GgufFileTest, IntegersConvertBetweenWidthsWhenTheValueFits) {
  GgufWriter w;
  w.add("as_u8", V::u8(30))
      .add("as_i32", V::i32(30))
      .add("as_u64", V::u64(30))
      .add("as_i16", V::i16(-7))
      .add("big", V::u64(5'000'000'000))
      .add("negative", V::i32(-1))
      .add("f64", V::f64(0.25))
      .add("eps", V::f32(1e-5f));
  const GgufFile f(write(w));
  EXPECT_EQ(f.value("eps").to_text(), "1e-05");  // an f32 shown as an f32, not a double
  EXPECT_EQ(f.get_u32("as_u8"), 30u);
  EXPECT_EQ(f.get_u32("as_i32"), 30u);
  EXPECT_EQ(f.get_u32("as_u64"), 30u);
  EXPECT_EQ(f.get_i64("as_u64"), 30);
  EXPECT_EQ(f.get_i32("as_i16"), -7);
  EXPECT_EQ(f.get_i64("as_i16"), -7);
  EXPECT_EQ(f.get_u64("big"), 5'000'000'000u);
  EXPECT_EQ(f.get_i64("big"), 5'000'000'000);
  EXPECT_EQ(f.get_f32("f64"), 0.25f);  // f64 reads as f32 too
  EXPECT_EQ(f.value("as_u8").as_integer<std::int8_t>(), 30);
  EXPECT_EQ(f.value("negative").as_integer<std::uint64_t>(), std::nullopt);
  EXPECT_TRUE(f.value("negative").is_integer());
  EXPECT_FALSE(f.value("f64").is_integer());
  // A scalar is no array: it has no elements.
  EXPECT_EQ(f.value("as_u8").size(), 0u);
  EXPECT_TRUE(f.value("as_u8").elements().begin() == f.value("as_u8").elements().end());

  const std::string big = error_of<Error>([&] { f.get_u32("big"); });
  EXPECT_THAT(big, HasSubstr("model.gguf: metadata key 'big' is u64 5000000000, expected u32"));
  EXPECT_THAT(error_of<Error>([&] { f.get_u64("negative"); }),
              HasSubstr("metadata key 'negative' is i32 -1, expected u64"));
  EXPECT_THAT(error_of<Error>([&] { f.get_u32("f64"); }),
              HasSubstr("metadata key 'f64' is f64 0.25, expected u32"));
  EXPECT_THAT(error_of<Error>([&] { f.get_f32("as_u8"); }),
              HasSubstr("metadata key 'as_u8' is u8 30, expected f32"));
  EXPECT_THAT(error_of<Error>([&] { f.get_string("as_i32"); }),
              HasSubstr("metadata key 'as_i32' is i32 30, expected string"));
  EXPECT_THAT(error_of<Error>([&] { f.get_bool("as_u8"); }),
              HasSubstr("metadata key 'as_u8' is u8 30, expected bool"));
}

TEST_F(GgufFileTest, MissingKeysAreErrorsForGetAndEmptyForFind) {
  GgufWriter w;
  w.add("general.architecture", V::string("llama")).add("n", V::u32(3));
  const GgufFile f(write(w));
  EXPECT_EQ(f.find("nope"), nullptr);
  EXPECT_NE(f.find("n"), nullptr);
  EXPECT_EQ(f.find_u32("nope"), std::nullopt);
  EXPECT_EQ(f.find_string("nope"), std::nullopt);
  EXPECT_EQ(f.find_string_array("nope"), std::nullopt);
  EXPECT_EQ(f.find_u32("n"), 3u);
  EXPECT_EQ(f.find_string("general.architecture"), "llama");
  // Present but of another type: an error, not an empty optional.
  EXPECT_THAT(error_of<Error>([&] { f.find_f32("n"); }), HasSubstr("'n' is u32 3, expected f32"));
  EXPECT_THAT(error_of<Error>([&] { f.find_i32_array("n"); }),
              HasSubstr("'n' is u32 3, expected an array of i32"));
  const std::string missing = error_of<Error>([&] { f.get_u32("llama.block_count"); });
  EXPECT_THAT(missing, HasSubstr("model.gguf: no metadata key 'llama.block_count'"));
  EXPECT_THAT(missing, HasSubstr("has 2 keys"));
}

TEST_F(GgufFileTest, ReadsArraysOfEveryKind) {
  GgufWriter w;
  w.add("tokens", V::strings({"<|endoftext|>", "", "\xc4\xa0the", "a b"}))
      .add("types", V::array(id::kI32, {V::i32(1), V::i32(-3), V::i32(2147483647)}))
      .add("scores", V::array(id::kF32, {V::f32(0.5f), V::f32(-1e-3f)}))
      .add("wide_scores", V::array(id::kF64, {V::f64(0.5), V::f64(2.0)}))
      .add("bytes", V::array(id::kU8, {V::u8(1), V::u8(200)}))
      .add("flags", V::array(id::kBool, {V::boolean(true), V::boolean(false)}))
      .add("u64s", V::array(id::kU64, {V::u64(7), V::u64(1ull << 40)}))
      .add("empty", V::array(id::kString, {}))
      .add("nested", V::array(id::kArray,
                              {V::array(id::kU16, {V::u16(1), V::u16(2)}), V::strings({"x", "yz"}),
                               V::array(id::kArray, {V::array(id::kI8, {V::i8(-5)})})}));
  const GgufFile f(write(w));

  EXPECT_THAT(f.get_string_array("tokens"), ElementsAre("<|endoftext|>", "", "\xc4\xa0the", "a b"));
  EXPECT_THAT(f.get_i32_array("types"), ElementsAre(1, -3, 2147483647));
  EXPECT_THAT(f.get_f32_array("scores"), ElementsAre(0.5f, -1e-3f));
  EXPECT_THAT(f.get_f32_array("wide_scores"), ElementsAre(0.5f, 2.0f));
  EXPECT_THAT(f.get_i32_array("bytes"), ElementsAre(1, 200));
  EXPECT_THAT(f.get_string_array("empty"), ElementsAre());
  EXPECT_THAT(f.get_i32_array("empty"), ElementsAre());  // no element is of another type

  const GgufValue& tokens = f.value("tokens");
  EXPECT_EQ(tokens.type(), GgufValueType::array);
  EXPECT_EQ(tokens.element_type(), GgufValueType::string);
  EXPECT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens.type_name(), "array of string");
  EXPECT_EQ(tokens.to_text(2), "[\"<|endoftext|>\", \"\", ... 4 elements]");

  std::vector<bool> flags;
  for (const GgufValue flag : f.value("flags").elements()) flags.push_back(*flag.as_bool());
  EXPECT_THAT(flags, ElementsAre(true, false));
  std::vector<std::uint64_t> u64s;
  for (const GgufValue v : f.value("u64s").elements())
    u64s.push_back(*v.as_integer<std::uint64_t>());
  EXPECT_THAT(u64s, ElementsAre(7u, 1ull << 40));

  // Arrays of arrays, each element with its own element type.
  const GgufValue& nested = f.value("nested");
  EXPECT_EQ(nested.type_name(), "array of array");
  EXPECT_EQ(nested.size(), 3u);
  std::vector<GgufValue> inner(nested.elements().begin(), nested.elements().end());
  ASSERT_EQ(inner.size(), 3u);
  EXPECT_EQ(inner[0].type_name(), "array of u16");
  EXPECT_EQ(inner[0].to_text(), "[1, 2]");
  EXPECT_EQ(inner[1].to_text(), "[\"x\", \"yz\"]");
  EXPECT_EQ(inner[2].type_name(), "array of array");
  const GgufValue deepest = *(*inner[2].elements().begin()).elements().begin();
  EXPECT_EQ(deepest.as_integer<int>(), -5);
  EXPECT_EQ(nested.to_text(), "[[1, 2], [\"x\", \"yz\"], [[-5]]]");
}

TEST_F(GgufFileTest, ArrayReadsNameTheKeyAndTheElementOfAnotherType) {
  GgufWriter w;
  w.add("ids", V::array(id::kU32, {V::u32(1), V::u32(4000000000u)}))
      .add("mixed", V::array(id::kArray, {V::array(id::kU8, {})}))
      .add("n", V::u32(1));
  const GgufFile f(write(w));
  EXPECT_THAT(error_of<Error>([&] { f.get_i32_array("ids"); }),
              HasSubstr("metadata key 'ids' is an array of u32, expected an array of i32 (or "
                        "another integer type, with a value that fits): element #1 is u32 "
                        "4000000000"));
  EXPECT_THAT(error_of<Error>([&] { f.get_string_array("ids"); }),
              HasSubstr("element #0 is u32 1"));
  EXPECT_THAT(error_of<Error>([&] { f.get_f32_array("mixed"); }),
              HasSubstr("element #0 is array of u8 []"));
  EXPECT_THAT(error_of<Error>([&] { f.get_string_array("n"); }),
              HasSubstr("metadata key 'n' is u32 1, expected an array of string"));
}

TEST_F(GgufFileTest, VersionsTwoAndThreeReadTheSame) {
  for (const std::uint32_t version : {2u, 3u}) {
    GgufWriter w;
    w.version = version;
    w.add("general.architecture", V::string("llama"))
        .add("tokens", V::strings({"a", "b"}))
        .add_tensor({"t", 0, {4, 2}, {}});
    const GgufFile f(write(w));
    EXPECT_EQ(f.version(), version);
    EXPECT_EQ(f.get_string("general.architecture"), "llama");
    EXPECT_THAT(f.get_string_array("tokens"), ElementsAre("a", "b"));
    EXPECT_EQ(f.tensor("t").bytes, 32u);
  }
}

TEST_F(GgufFileTest, VersionOneAndOthersAreRefused) {
  GgufWriter w;
  w.add("general.architecture", V::string("llama"));
  w.version = 1;
  EXPECT_THAT(open_error(w), HasSubstr("model.gguf: version at byte offset 4: GGUF version 1 "
                                       "(32-bit counts and lengths) is not supported, only "
                                       "versions 2 and 3"));
  w.version = 4;
  EXPECT_THAT(open_error(w), HasSubstr("version at byte offset 4: unsupported GGUF version 4 "
                                       "(supported: 2 and 3)"));
  w.version = 0x03000000;  // 3, as a big-endian file stores it
  EXPECT_THAT(open_error(w), HasSubstr("a big-endian GGUF file (version 3)"));
}

// A tensor of each supported type, with the type, dims and data the reader must report.
struct TypeCase {
  std::uint32_t ggml;
  TensorType type;
  std::vector<std::uint64_t> dims;
  std::size_t bytes;
};

const std::vector<TypeCase> kTypeCases = {
    {0, TensorType::f32, {3}, 12},
    {1, TensorType::f16, {5, 3}, 30},
    {30, TensorType::bf16, {2, 2, 2, 2}, 32},
    {8, TensorType::q8_0, {64, 3}, 2 * 34 * 3},
    {2, TensorType::q4_0, {32, 2, 3}, 18 * 6},
    {3, TensorType::q4_1, {96, 5}, 3 * 20 * 5},
    {12, TensorType::q4_k, {512, 2}, 2 * 144 * 2},
    {14, TensorType::q6_k, {256, 3}, 210 * 3},
};

TEST_F(GgufFileTest, ReadsTensorsOfEverySupportedType) {
  for (const std::uint32_t alignment : {32u, 64u, 8u}) {
    SCOPED_TRACE(alignment);
    GgufWriter w;
    if (alignment != 32) w.set_alignment(alignment);
    w.add("general.architecture", V::string("llama"));
    for (int copy = 0; copy < 2; ++copy)
      for (const TypeCase& c : kTypeCases)
        w.add_tensor(
            {std::string(to_string(c.type)) + "." + std::to_string(copy), c.ggml, c.dims, {}});
    GgufLayout layout;
    const fs::path path = write(w, &layout);
    const GgufFile f(path);

    EXPECT_EQ(f.alignment(), alignment);
    EXPECT_EQ(f.data_offset(), layout.data_start);
    EXPECT_EQ(f.data_offset() % alignment, 0u);
    ASSERT_EQ(f.tensors().size(), 2 * kTypeCases.size());
    for (std::size_t i = 0; i < f.tensors().size(); ++i) {
      const TypeCase& c = kTypeCases[i % kTypeCases.size()];
      const GgufTensor& t = f.tensors()[i];
      SCOPED_TRACE(t.name);
      EXPECT_EQ(&f.tensor(t.name), &t);
      EXPECT_EQ(t.type, c.type);
      EXPECT_EQ(ggml_type_id(t.type), c.ggml);
      EXPECT_EQ(t.dims, std::vector<std::int64_t>(c.dims.begin(), c.dims.end()));
      EXPECT_EQ(t.bytes, c.bytes);
      EXPECT_EQ(t.offset, layout.tensors[i].data_offset);
      EXPECT_EQ(t.offset % alignment, 0u);
      EXPECT_EQ(t.data - f.tensors()[0].data, std::ptrdiff_t(t.offset));
      EXPECT_EQ(t.elements(),
                std::int64_t(c.bytes / info(c.type).block_bytes * info(c.type).block_elements));
      EXPECT_EQ(t.rows(), t.elements() / t.dims[0]);
      bool pattern = true;
      for (std::size_t b = 0; b < t.bytes; ++b)
        pattern = pattern && t.data[b] == cocktail::testing::pattern_byte(i, b);
      EXPECT_TRUE(pattern) << "the view does not show the tensor's bytes";
    }
    // The last tensor's data ends the file.
    const GgufTensor& last = f.tensors().back();
    EXPECT_EQ(f.data_offset() + last.offset + last.bytes, f.file_size());
  }
}

TEST_F(GgufFileTest, LooksUpTensorsByName) {
  GgufWriter w;
  w.add_tensor({"token_embd.weight", 8, {64, 10}, {}})
      .add_tensor({"output_norm.weight", 0, {64}, {}});
  const GgufFile f(write(w));
  EXPECT_EQ(f.tensor("output_norm.weight").dims, std::vector<std::int64_t>{64});
  EXPECT_EQ(f.find_tensor("output.weight"), nullptr);
  EXPECT_THAT(error_of<Error>([&] { f.tensor("output.weight"); }),
              HasSubstr("model.gguf: no tensor named 'output.weight' (the file has 2 tensors)"));
}

TEST_F(GgufFileTest, MovedFileKeepsItsViews) {
  GgufWriter w;
  w.add("name", V::string("moved")).add_tensor({"t", 0, {8}, {}});
  std::optional<GgufFile> first(std::in_place, write(w));
  const GgufTensor* tensor = &first->tensor("t");
  const std::byte* data = tensor->data;
  const std::byte expected = data[5];
  GgufFile second = std::move(*first);
  first.reset();
  EXPECT_EQ(second.get_string("name"), "moved");
  EXPECT_EQ(second.tensor("t").data, data);
  EXPECT_EQ(second.tensor("t").name, "t");
  EXPECT_EQ(second.tensor("t").data[5], expected);
  EXPECT_EQ(second.metadata()[0].key, "name");
}

TEST_F(GgufFileTest, AcceptsAlignmentOfAnyIntegerTypeAndRefusesOthers) {
  GgufWriter w;
  w.align_data(16);
  w.add("general.alignment", V::u64(16)).add_tensor({"t", 0, {3}, {}});
  EXPECT_EQ(GgufFile(write(w)).alignment(), 16u);

  GgufLayout layout;
  GgufWriter odd;
  odd.add("general.alignment", V::u32(48));
  write(odd, &layout);
  EXPECT_THAT(open_error(odd),
              HasSubstr("metadata key #0 'general.alignment' value at byte offset " +
                        std::to_string(layout.metadata[0].value) +
                        ": the alignment must be a power of two, not u32 48"));
  GgufWriter zero;
  zero.add("general.alignment", V::u32(0));
  EXPECT_THAT(open_error(zero), HasSubstr("must be a power of two, not u32 0"));
  GgufWriter text;
  text.add("general.alignment", V::string("32"));
  EXPECT_THAT(open_error(text), HasSubstr("must be a power of two, not string \"32\""));
}

TEST_F(GgufFileTest, DescribeListsTheHeaderAndKeys) {
  GgufWriter w;
  w.add("general.architecture", V::string("llama")).add("llama.block_count", V::u32(30));
  w.add_tensor({"a", 0, {4}, {}}).add_tensor({"b", 0, {4}, {}}).add_tensor({"c", 3, {32}, {}});
  const std::string text = GgufFile(write(w)).describe();
  EXPECT_THAT(text, HasSubstr("GGUF v3"));
  EXPECT_THAT(text, HasSubstr("2 metadata keys, 3 tensors (2 f32, 1 q4_1), alignment 32"));
  EXPECT_THAT(text, HasSubstr("  general.architecture (string) = \"llama\"\n"));
  EXPECT_THAT(text, HasSubstr("  llama.block_count (u32) = 30\n"));
}

TEST_F(GgufFileTest, NamesTheFileItCannotOpen) {
  EXPECT_THAT(error_of<Error>([&] { GgufFile{dir_.path() / "absent.gguf"}; }),
              HasSubstr("absent.gguf: cannot open: No such file or directory"));
  EXPECT_THAT(error_of<Error>([&] { GgufFile{dir_.path()}; }), HasSubstr(": not a regular file"));
  const fs::path empty = dir_.write("empty.gguf", {});
  EXPECT_THAT(
      error_of<Error>([&] { GgufFile{empty}; }),
      HasSubstr("empty.gguf: magic at byte offset 0: truncated file: 4 bytes needed, 0 left"));
}

TEST(GgmlTypes, MapIdsToTensorTypesAndNames) {
  EXPECT_EQ(tensor_type_from_ggml(0), TensorType::f32);
  EXPECT_EQ(tensor_type_from_ggml(1), TensorType::f16);
  EXPECT_EQ(tensor_type_from_ggml(2), TensorType::q4_0);
  EXPECT_EQ(tensor_type_from_ggml(3), TensorType::q4_1);
  EXPECT_EQ(tensor_type_from_ggml(8), TensorType::q8_0);
  EXPECT_EQ(tensor_type_from_ggml(12), TensorType::q4_k);
  EXPECT_EQ(tensor_type_from_ggml(14), TensorType::q6_k);
  EXPECT_EQ(tensor_type_from_ggml(30), TensorType::bf16);
  EXPECT_EQ(tensor_type_from_ggml(6), std::nullopt);
  EXPECT_EQ(tensor_type_from_ggml(4000), std::nullopt);
  EXPECT_EQ(ggml_type_name(13), "Q5_K");
  EXPECT_EQ(ggml_type_name(30), "BF16");
  EXPECT_EQ(ggml_type_name(4000), "");
  for (std::uint32_t i = 0; i < 64; ++i)
    if (const auto t = tensor_type_from_ggml(i)) {
      EXPECT_EQ(ggml_type_id(*t), i);
    }
}

}  // namespace
}  // namespace cocktail::models
