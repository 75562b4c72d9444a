// Broken files: each must give a cocktail::Error naming the file, the field and its byte
// offset — never a crash, and never an allocation sized by a field that was not checked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>

#include "cocktail/error.hpp"
#include "cocktail/models/gguf_file.hpp"
#include "gguf_writer.hpp"
#include "support/error_of.hpp"

namespace cocktail::models {
namespace {

namespace fs = std::filesystem;
using cocktail::testing::Bytes;
using cocktail::testing::error_of;
using cocktail::testing::GgufLayout;
using cocktail::testing::GgufWriter;
using cocktail::testing::put_u32;
using cocktail::testing::put_u64;
using cocktail::testing::TempDir;
using V = cocktail::testing::TestValue;
using ::testing::AnyOf;
using ::testing::HasSubstr;
namespace id = cocktail::testing;

// A small file with a value of every type and a tensor of three types.
GgufWriter small_file() {
  GgufWriter w;
  w.add("general.architecture", V::string("llama"))
      .add("llama.block_count", V::u32(2))
      .add("u8", V::u8(1))
      .add("i8", V::i8(-1))
      .add("u16", V::u16(2))
      .add("i16", V::i16(-2))
      .add("i32", V::i32(-3))
      .add("u64", V::u64(4))
      .add("i64", V::i64(-5))
      .add("f32", V::f32(1e-5f))
      .add("f64", V::f64(0.5))
      .add("flag", V::boolean(true))
      .add("tokens", V::strings({"a", "", "bc"}))
      .add("flags", V::array(id::kBool, {V::boolean(false), V::boolean(true)}))
      .add("nested", V::array(id::kArray, {V::array(id::kI16, {V::i16(1)}), V::strings({"x"})}))
      .add_tensor({"token_embd.weight", 8, {32, 2}, {}})
      .add_tensor({"output_norm.weight", 0, {5}, {}})
      .add_tensor({"blk.0.attn_q.weight", 12, {256, 1}, {}});
  return w;
}

class GgufCorruptTest : public ::testing::Test {
 protected:
  // The message of the Error that opening `bytes` gives.
  std::string error_for(const Bytes& bytes) {
    const fs::path file = dir_.write("broken.gguf", bytes);
    return error_of<Error>([&] { GgufFile{file}; });
  }
  std::string error_for(const GgufWriter& writer) { return error_for(writer.bytes()); }

  static std::string at(std::size_t offset) {
    return " at byte offset " + std::to_string(offset) + ": ";
  }

  TempDir dir_;
};

TEST_F(GgufCorruptTest, TheSmallFileIsValid) {
  GgufLayout layout;
  const Bytes bytes = small_file().bytes(&layout);
  const GgufFile f(dir_.write("small.gguf", bytes));
  EXPECT_EQ(f.metadata().size(), 15u);
  EXPECT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(f.file_size(), bytes.size());
}

TEST_F(GgufCorruptTest, BadMagic) {
  GgufWriter w = small_file();
  w.magic = 0x4c4d4747;  // "GGML"
  EXPECT_THAT(error_for(w), HasSubstr("broken.gguf: magic" + at(0) +
                                      "not a GGUF file: it starts with 'GGML', not 'GGUF'"));
  Bytes bytes = small_file().bytes();
  bytes[0] = std::byte{0};
  EXPECT_THAT(error_for(bytes), HasSubstr("it starts with '\\x00GUF'"));
}

TEST_F(GgufCorruptTest, UnsupportedVersion) {
  GgufWriter w = small_file();
  w.version = 7;
  EXPECT_THAT(error_for(w),
              HasSubstr("broken.gguf: version" + at(4) + "unsupported GGUF version 7"));
  w.version = 1;
  EXPECT_THAT(error_for(w), HasSubstr("version" + at(4) + "GGUF version 1"));
}

// Every prefix of a valid file is a truncated file: an Error at an offset within the prefix.
TEST_F(GgufCorruptTest, TruncationAtEveryByteIsAnError) {
  const Bytes bytes = small_file().bytes();
  const fs::path file = dir_.write("broken.gguf", bytes);
  for (std::size_t length = bytes.size(); length-- > 0;) {
    SCOPED_TRACE(length);
    fs::resize_file(file, length);
    const std::string message = error_of<Error>([&] { GgufFile{file}; });
    EXPECT_THAT(message, HasSubstr("broken.gguf: "));
    EXPECT_THAT(message, AnyOf(HasSubstr("truncated file"), HasSubstr("run past the end"),
                               HasSubstr("cannot fit"), HasSubstr("is more than the")));
    const std::string_view marker = " at byte offset ";
    const std::size_t found = message.find(marker);
    ASSERT_NE(found, std::string::npos) << message;
    EXPECT_LE(std::stoull(message.substr(found + marker.size())), length) << message;
  }
}

TEST_F(GgufCorruptTest, HugeStringLengths) {
  GgufLayout layout;
  Bytes bytes = small_file().bytes(&layout);
  Bytes key = bytes;
  put_u64(key, layout.metadata[0].key, std::uint64_t(1) << 62);
  EXPECT_THAT(error_for(key), HasSubstr("broken.gguf: metadata key #0 name length" + at(24) +
                                        "string length 4611686018427387904 is more than the"));
  Bytes value = bytes;
  put_u64(value, layout.metadata[0].value, ~std::uint64_t{0});
  EXPECT_THAT(error_for(value),
              HasSubstr("metadata key #0 'general.architecture' value length" +
                        at(layout.metadata[0].value) + "string length 18446744073709551615"));
  // The third string of "tokens" (key #12): after the array header and "a", "".
  Bytes element = bytes;
  const std::size_t third = layout.metadata[12].value + 12 + (8 + 1) + 8;
  put_u64(element, third, std::uint64_t(1) << 40);
  EXPECT_THAT(error_for(element), HasSubstr("metadata key #12 'tokens' value element #2 length" +
                                            at(third) + "string length 1099511627776"));
  Bytes name = bytes;
  put_u64(name, layout.tensors[1].name, std::uint64_t(1) << 50);
  EXPECT_THAT(error_for(name), HasSubstr("tensor #1 name length" + at(layout.tensors[1].name)));
}

TEST_F(GgufCorruptTest, HugeArrayCounts) {
  GgufLayout layout;
  const Bytes bytes = small_file().bytes(&layout);
  Bytes strings = bytes;
  const std::size_t count_at = layout.metadata[12].value + 4;
  put_u64(strings, count_at, std::uint64_t(1) << 60);
  EXPECT_THAT(error_for(strings),
              HasSubstr("metadata key #12 'tokens' value count" + at(count_at) +
                        "1152921504606846976 elements of string cannot fit in the"));
  Bytes flags = bytes;
  put_u64(flags, layout.metadata[13].value + 4, ~std::uint64_t{0});
  EXPECT_THAT(error_for(flags),
              HasSubstr("metadata key #13 'flags' value count" + at(layout.metadata[13].value + 4) +
                        "18446744073709551615 elements of bool cannot fit"));
  // An array inside an array.
  Bytes nested = bytes;
  const std::size_t inner_count = layout.metadata[14].value + 12 + 4;
  put_u64(nested, inner_count, std::uint64_t(1) << 61);
  EXPECT_THAT(error_for(nested),
              HasSubstr("metadata key #14 'nested' value element #0 count" + at(inner_count) +
                        "2305843009213693952 elements of i16"));

  // A fixed-size array whose count fits the bytes left (each u32 takes 4) but not the file.
  GgufWriter w;
  w.add("ids", V::array(id::kU32, {V::u32(1), V::u32(2)}));
  Bytes short_array = w.bytes(&layout);
  put_u64(short_array, layout.metadata[0].value + 4, 3);
  EXPECT_THAT(error_for(short_array),
              HasSubstr("metadata key #0 'ids' value count" + at(layout.metadata[0].value + 4) +
                        "3 elements of u32 cannot fit in the 8 bytes left"));
}

TEST_F(GgufCorruptTest, HugeKeyAndTensorCounts) {
  GgufWriter w = small_file();
  w.metadata_count = std::uint64_t(1) << 59;
  EXPECT_THAT(error_for(w), HasSubstr("broken.gguf: metadata key count" + at(16) +
                                      "576460752303423488 metadata keys and 3 tensors cannot fit"));
  w = small_file();
  w.tensor_count = ~std::uint64_t{0};
  EXPECT_THAT(error_for(w),
              HasSubstr("tensor count" + at(8) + "18446744073709551615 tensors cannot fit in the"));
  // A count that fits the bytes left but is one more than the file holds.
  w = small_file();
  w.tensor_count = 4;
  EXPECT_THAT(error_for(w), HasSubstr("broken.gguf: tensor #3 "));
}

TEST_F(GgufCorruptTest, TensorDataPastTheEnd) {
  GgufLayout layout;
  Bytes bytes = small_file().bytes(&layout);
  Bytes far = bytes;
  put_u64(far, layout.tensors[1].offset, std::uint64_t(1) << 40);
  EXPECT_THAT(error_for(far),
              HasSubstr("tensor #1 'output_norm.weight' offset" + at(layout.tensors[1].offset) +
                        "20 bytes of data at offset 1099511627776 in the data section, which "
                        "starts at byte " +
                        std::to_string(layout.data_start) + ", run past the end of the file (" +
                        std::to_string(bytes.size()) + " bytes)"));
  Bytes wraps = bytes;  // an offset whose end would wrap around 2^64
  put_u64(wraps, layout.tensors[2].offset, ~std::uint64_t{0} - 31);
  EXPECT_THAT(error_for(wraps),
              HasSubstr("tensor #2 'blk.0.attn_q.weight' offset" + at(layout.tensors[2].offset)));
  // The last tensor one block longer than its data: a bigger row.
  Bytes longer = bytes;
  put_u64(longer, layout.tensors[2].dims, 512);
  EXPECT_THAT(error_for(longer), HasSubstr("288 bytes of data at offset " +
                                           std::to_string(layout.tensors[2].data_offset)));
}

TEST_F(GgufCorruptTest, MisalignedTensorOffset) {
  GgufLayout layout;
  Bytes bytes = small_file().bytes(&layout);
  put_u64(bytes, layout.tensors[0].offset, 16);
  EXPECT_THAT(error_for(bytes),
              HasSubstr("tensor #0 'token_embd.weight' offset" + at(layout.tensors[0].offset) +
                        "data offset 16 is not a multiple of the alignment 32"));
  GgufWriter w = small_file();
  w.set_alignment(64);
  bytes = w.bytes(&layout);
  put_u64(bytes, layout.tensors[1].offset, layout.tensors[1].data_offset + 32);
  EXPECT_THAT(error_for(bytes), HasSubstr("not a multiple of the alignment 64"));
}

TEST_F(GgufCorruptTest, UnsupportedTensorTypes) {
  GgufLayout layout;
  Bytes bytes = small_file().bytes(&layout);
  put_u32(bytes, layout.tensors[1].type, 6);
  EXPECT_THAT(error_for(bytes),
              HasSubstr("tensor #1 'output_norm.weight' type" + at(layout.tensors[1].type) +
                        "ggml type 6 (Q5_0) is not supported (supported: F32, F16, Q4_0, Q4_1, "
                        "Q8_0, Q4_K, Q6_K, BF16)"));
  put_u32(bytes, layout.tensors[1].type, 999);
  EXPECT_THAT(error_for(bytes), HasSubstr("type" + at(layout.tensors[1].type) +
                                          "unknown ggml type 999 is not supported"));
}

TEST_F(GgufCorruptTest, BadDimensions) {
  GgufLayout layout;
  const Bytes bytes = small_file().bytes(&layout);
  const GgufLayout::Tensor& t = layout.tensors[0];
  const std::string field = "tensor #0 'token_embd.weight' ";

  Bytes five = bytes;
  put_u32(five, t.n_dims, 5);
  EXPECT_THAT(error_for(five),
              HasSubstr(field + "n_dims" + at(t.n_dims) + "5 dimensions, not 1 to 4"));
  Bytes none = bytes;
  put_u32(none, t.n_dims, 0);
  EXPECT_THAT(error_for(none), HasSubstr(field + "n_dims" + at(t.n_dims) + "0 dimensions"));

  Bytes zero = bytes;
  put_u64(zero, t.dims + 8, 0);
  EXPECT_THAT(error_for(zero), HasSubstr(field + "dims" + at(t.dims) + "dimension 1 is 0"));

  Bytes overflow = bytes;
  put_u64(overflow, t.dims, std::uint64_t(1) << 40);
  put_u64(overflow, t.dims + 8, std::uint64_t(1) << 40);
  EXPECT_THAT(error_for(overflow), HasSubstr(field + "dims" + at(t.dims) +
                                             "the dims overflow: more than 2^63 - 1 elements"));
  Bytes too_long = bytes;
  put_u64(too_long, t.dims, ~std::uint64_t{0});
  EXPECT_THAT(error_for(too_long), HasSubstr("the dims overflow"));

  // 2^62 f32 elements fit in an int64 but not their 2^64 bytes in a size_t.
  GgufWriter w;
  w.add_tensor({"huge", 0, {std::uint64_t(1) << 31, std::uint64_t(1) << 31}, Bytes(64)});
  EXPECT_THAT(error_for(w), HasSubstr("4611686018427387904 elements of f32 take more bytes than"));

  Bytes partial = bytes;
  put_u64(partial, t.dims, 48);
  EXPECT_THAT(error_for(partial),
              HasSubstr(field + "dims" + at(t.dims) +
                        "a row of 48 elements (ne0) is not a whole number of q8_0 blocks of 32 "
                        "elements"));
  GgufWriter k_quant;
  k_quant.add_tensor({"w", 14, {128, 2}, Bytes(210)});
  EXPECT_THAT(error_for(k_quant), HasSubstr("a row of 128 elements (ne0) is not a whole number of "
                                            "q6_k blocks of 256 elements"));
}

TEST_F(GgufCorruptTest, BadValueTypes) {
  GgufLayout layout;
  const Bytes bytes = small_file().bytes(&layout);
  Bytes type = bytes;
  put_u32(type, layout.metadata[1].type, 13);
  EXPECT_THAT(error_for(type), HasSubstr("metadata key #1 'llama.block_count' type" +
                                         at(layout.metadata[1].type) + "unknown value type 13"));
  Bytes element = bytes;
  put_u32(element, layout.metadata[12].value, 0xffffffffu);
  EXPECT_THAT(error_for(element),
              HasSubstr("metadata key #12 'tokens' value element type" +
                        at(layout.metadata[12].value) + "unknown value type 4294967295"));
  Bytes flag = bytes;
  flag[layout.metadata[11].value] = std::byte{2};
  EXPECT_THAT(error_for(flag), HasSubstr("metadata key #11 'flag' value" +
                                         at(layout.metadata[11].value) + "bool is 2, not 0 or 1"));
  Bytes flags = bytes;
  flags[layout.metadata[13].value + 12 + 1] = std::byte{0x80};
  EXPECT_THAT(error_for(flags), HasSubstr("metadata key #13 'flags' value element #1" +
                                          at(layout.metadata[13].value + 13) + "bool is 128"));
}

TEST_F(GgufCorruptTest, NamesFromTheFileAreEscaped) {
  GgufWriter w;
  w.add(std::string("bad\x01key'", 8), V::u32(1));
  GgufLayout layout;
  Bytes bytes = w.bytes(&layout);
  put_u32(bytes, layout.metadata[0].type, 99);
  EXPECT_THAT(error_for(bytes), HasSubstr("metadata key #0 'bad\\x01key\\'' type"));
}

// Nested arrays: 8 levels are read, a 9th is refused before the recursion goes deeper.
TEST_F(GgufCorruptTest, ArraysNestedTooDeep) {
  auto nest = [](int levels) {
    V value = V::array(id::kU8, {V::u8(7)});
    for (int i = 1; i < levels; ++i) value = V::array(id::kArray, {value});
    return value;
  };
  GgufWriter eight;
  eight.add("deep", nest(8));
  const GgufFile f(dir_.write("deep.gguf", eight.bytes()));
  EXPECT_EQ(f.value("deep").to_text(), "[[[[[[[[7]]]]]]]]");

  GgufWriter nine;
  nine.add("deep", nest(9));
  GgufLayout layout;
  nine.bytes(&layout);
  EXPECT_THAT(error_for(nine),
              HasSubstr("metadata key #0 'deep' value"
                        " element #0 element #0 element #0 element #0 element #0 "
                        "element #0 element #0 element #0" +
                        at(layout.metadata[0].value + 8 * 12) + "arrays nested more than 8 deep"));
}

TEST_F(GgufCorruptTest, DuplicateNames) {
  GgufWriter keys;
  keys.add("a", V::u32(1)).add("b", V::u32(2)).add("a", V::u32(3));
  GgufLayout layout;
  keys.bytes(&layout);
  EXPECT_THAT(error_for(keys), HasSubstr("metadata key #2 'a'" + at(layout.metadata[2].key) +
                                         "duplicate key: metadata key #0 has it too"));
  GgufWriter tensors;
  tensors.add_tensor({"w", 0, {4}, {}}).add_tensor({"w", 0, {4}, {}});
  tensors.bytes(&layout);
  EXPECT_THAT(error_for(tensors), HasSubstr("tensor #1 'w'" + at(layout.tensors[1].name) +
                                            "duplicate tensor name: tensor #0 has it too"));
}

// Random bytes changed in the header, metadata and tensor infos: each file either opens, with
// every value readable and every tensor inside the file, or is an Error.
TEST_F(GgufCorruptTest, RandomCorruptionIsAnErrorOrAValidFile) {
  GgufLayout layout;
  const Bytes bytes = small_file().bytes(&layout);
  std::mt19937 random(20261122);
  std::uniform_int_distribution<std::size_t> position(0, layout.data_start - 1);
  std::uniform_int_distribution<int> value(0, 255), changes(1, 4);
  const fs::path file = dir_.write("random.gguf", bytes);
  int opened = 0, refused = 0;
  for (int round = 0; round < 3000; ++round) {
    Bytes broken = bytes;
    for (int n = changes(random); n > 0; --n) broken[position(random)] = std::byte(value(random));
    // Overwritten in place: truncating and writing the file again takes ten times longer.
    std::fstream(file, std::ios::in | std::ios::out | std::ios::binary)
        .write(reinterpret_cast<const char*>(broken.data()), std::streamsize(broken.size()));
    try {
      const GgufFile f(file);
      for (const GgufMetadata& entry : f.metadata()) (void)entry.value.to_text(1000);
      for (const GgufTensor& t : f.tensors())
        ASSERT_LE(f.data_offset() + t.offset + t.bytes, f.file_size());
      ++opened;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("random.gguf: "));
      EXPECT_THAT(e.what(), HasSubstr(" at byte offset "));
      ++refused;
    }
  }
  EXPECT_GT(opened, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace cocktail::models
