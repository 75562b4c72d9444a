// The library's GGUF writer on its own: what it writes to a file, and what it refuses.
#include "cocktail/models/gguf_writer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "cocktail/models/gguf_file.hpp"
#include "gguf_writer.hpp"
#include "support/error_of.hpp"

namespace cocktail::models {
namespace {

namespace fs = std::filesystem;
using cocktail::testing::Bytes;
using cocktail::testing::error_of;
using cocktail::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using V = GgufWriterValue;

// Each tensor's bytes count up from its number.
void fill_counting(std::size_t tensor, std::span<std::byte> out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::byte(tensor + i);
}

GgufWriter small_writer() {
  GgufWriter w;
  w.add("general.architecture", V::string("llama"))
      .add("tokenizer.ggml.tokens", V::strings({"a", "b"}))
      .add("tokenizer.ggml.token_type", V::i32s(std::vector<std::int32_t>{1, 3}))
      .add_tensor("norm", TensorType::f32, {5})
      .add_tensor("w", TensorType::q4_0, {64, 3})
      .add_tensor("x", TensorType::q8_0, {32, 2, 2});
  return w;
}

Bytes read_bytes(const fs::path& path) {
  std::vector<std::byte> bytes(fs::file_size(path));
  std::FILE* file = std::fopen(path.c_str(), "rb");
  EXPECT_NE(file, nullptr);
  if (file == nullptr) return {};
  EXPECT_EQ(std::fread(bytes.data(), 1, bytes.size(), file), bytes.size());
  std::fclose(file);
  return bytes;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  return names;
}

TEST(GgufWriter, WritesToAFileWhatItMakesInMemory) {
  const TempDir dir;
  const GgufWriter w = small_writer();
  const fs::path path = dir.path() / "model.gguf";
  std::vector<std::uint64_t> written;
  w.write(path, fill_counting, [&](std::uint64_t done, std::uint64_t total) {
    EXPECT_EQ(total, w.layout().file_size);
    written.push_back(done);
  });
  const Bytes in_memory = w.bytes(fill_counting);
  EXPECT_EQ(read_bytes(path), in_memory);
  ASSERT_EQ(written.size(), 3u);
  EXPECT_LT(written[0], written[1]);
  EXPECT_EQ(written.back(), in_memory.size());
  EXPECT_THAT(names_in(dir.path()), ElementsAre("model.gguf"));

  const GgufFile f(path);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_THAT(f.get_i32_array("tokenizer.ggml.token_type"), ElementsAre(1, 3));
  const GgufTensor& x = f.tensor("x");
  EXPECT_EQ(x.type, TensorType::q8_0);
  EXPECT_EQ(x.dims, (std::vector<std::int64_t>{32, 2, 2}));
  EXPECT_EQ(x.bytes, 4u * 34u);
  EXPECT_EQ(x.data[0], std::byte(2));
  EXPECT_EQ(f.tensor("w").bytes, 3u * 2u * 18u);
}

TEST(GgufWriter, AFailedWriteLeavesTheOldFile) {
  const TempDir dir;
  const fs::path path = dir.write("model.gguf", Bytes(3, std::byte{7}));
  const auto failing = [](std::size_t tensor, std::span<std::byte> out) {
    if (tensor == 1) throw std::runtime_error("no more");
    fill_counting(tensor, out);
  };
  EXPECT_EQ(error_of<std::runtime_error>([&] { small_writer().write(path, failing); }), "no more");
  EXPECT_EQ(read_bytes(path), Bytes(3, std::byte{7}));
  EXPECT_THAT(names_in(dir.path()), ElementsAre("model.gguf"));

  EXPECT_THAT(
      error_of<Error>([&] { small_writer().write(dir.path() / "missing" / "m.gguf", failing); }),
      HasSubstr("missing/m.gguf." + std::to_string(::getpid()) +
                ".partial: cannot create: No such file or directory"));
}

TEST(GgufWriter, RefusesTensorsOfPartBlocksAndOddAlignments) {
  GgufWriter w;
  EXPECT_THAT(error_of<Error>([&] {
                w.add_tensor("w", TensorType::q4_0, {48, 2});
              }),
              HasSubstr("tensor 'w' of q4_0 cannot have the dims [48, 2]: each must be at least "
                        "1 and a row (the first) a whole number of blocks of 32 elements"));
  EXPECT_THAT(error_of<Error>([&] {
                w.add_tensor("v", TensorType::f32, {4, 0});
              }),
              HasSubstr("tensor 'v' of f32 cannot have the dims [4, 0]"));
  EXPECT_THAT(error_of<Error>([&] { w.add_tensor("e", TensorType::f32, {}); }),
              HasSubstr("tensor 'e' of f32 cannot have the dims []"));
  EXPECT_THAT(error_of<Error>([&] { w.set_alignment(48); }),
              HasSubstr("a GGUF alignment must be a power of two, not 48"));
  EXPECT_THAT(error_of<Error>([&] { w.align_data(0); }), HasSubstr("not 0"));
}

TEST(GgufWriter, AlignsDataAsSet) {
  GgufWriter w = small_writer();
  w.set_alignment(64);
  const GgufLayout layout = w.layout();
  EXPECT_EQ(layout.data_start % 64, 0u);
  for (const GgufLayout::Tensor& t : layout.tensors) EXPECT_EQ(t.data_offset % 64, 0u);
  const TempDir dir;
  const GgufFile f(dir.write("aligned.gguf", w.bytes(fill_counting)));
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.file_size(), layout.file_size);
}

}  // namespace
}  // namespace cocktail::models
