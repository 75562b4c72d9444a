// The catalogue of bad inputs (docs/bad-inputs.md): each row runs the `cocktail` binary on one
// bad input and expects a non-zero exit, an error naming what was wrong and where, and no
// sanitizer report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cocktail/version.hpp"
#include "models/gguf/gguf_writer.hpp"
#include "models/llama/tiny_llama.hpp"
#include "run_cli.hpp"

namespace cocktail::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// "{dir}" in a row's arguments and messages stands for the folder of prepared files.
constexpr std::string_view kDir = "{dir}";

struct BadInput {
  std::string name;
  std::vector<std::string> args;
  std::vector<std::string> messages;  // each must appear on stderr
};

// Names the row when a test fails, instead of dumping its bytes.
void PrintTo(const BadInput& row, std::ostream* out) {
  *out << row.name;
}

std::string expand(std::string text, const std::string& dir) {
  for (std::size_t at = text.find(kDir); at != std::string::npos; at = text.find(kDir, at)) {
    text.replace(at, kDir.size(), dir);
    at += dir.size();
  }
  return text;
}

// ---- The prepared files ----

Bytes read_bytes(const fs::path& path) {
  const std::string text = read_file(path);
  const auto* first = reinterpret_cast<const std::byte*>(text.data());
  return Bytes(first, first + text.size());
}

// Where the value of metadata `key` starts: after the key's bytes and its u32 type id.
std::size_t value_offset(const Bytes& file, std::string_view key) {
  const auto* first = reinterpret_cast<const char*>(file.data());
  const std::string_view text(first, file.size());
  const std::size_t at = text.find(key);
  EXPECT_NE(at, std::string_view::npos) << key;
  return at + key.size() + 4;
}

Bytes patched_u32(Bytes file, std::size_t at, std::uint32_t value) {
  put_u32(file, at, value);
  return file;
}

Bytes patched_u64(Bytes file, std::size_t at, std::uint64_t value) {
  put_u64(file, at, value);
  return file;
}

Bytes flipped(Bytes file, std::size_t at) {
  file[at] = ~file[at];
  return file;
}

Bytes prefix(const Bytes& file, std::size_t size) {
  return Bytes(file.begin(), file.begin() + std::ptrdiff_t(size));
}

// Where the tiny model is cut for the truncation rows: inside each header field, inside the
// metadata, and inside the tensor data (a byte offset, or a place named by the file's size).
const std::vector<std::string> kCuts = {"3", "6", "12", "20", "30", "200", "1000", "half", "last"};

std::size_t cut_at(const std::string& cut, std::size_t size) {
  if (cut == "half") return size / 2;
  if (cut == "last") return size - 1;
  return std::stoul(cut);
}

std::string text_of(std::size_t bytes, std::string_view word) {
  std::string text;
  text.reserve(bytes + word.size());
  while (text.size() < bytes) text += word;
  return text;
}

void write_text(const TempDir& dir, const std::string& name, std::string_view text) {
  dir.write(name, std::span(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

void prepare_model_files(const TempDir& dir) {
  TinyLlama tiny;
  const Bytes model = read_bytes(tiny.write(dir, 7));
  dir.write("zero.gguf", {});
  fs::create_directory(dir.path() / "folder.gguf");
  ASSERT_EQ(mkfifo((dir.path() / "fifo.gguf").c_str(), 0600), 0);
  chmod(dir.write("unreadable.gguf", model).c_str(), 0);
  for (const std::string& cut : kCuts) {
    dir.write("cut-" + cut + ".gguf", prefix(model, cut_at(cut, model.size())));
  }
  dir.write("magic.gguf", flipped(model, 0));
  dir.write("version.gguf", flipped(model, 4));
  dir.write("tensor-count.gguf", flipped(model, 15));
  dir.write("metadata-count.gguf", flipped(model, 23));
  dir.write("key-length.gguf", patched_u64(model, 24, std::uint64_t(1) << 60));
  const std::size_t architecture = value_offset(model, "general.architecture");
  dir.write("string-length.gguf", patched_u64(model, architecture, std::uint64_t(1) << 60));
  // An array's value: element type (u32), then the element count (u64).
  const std::size_t tokens = value_offset(model, "tokenizer.ggml.tokens") + 4;
  dir.write("array-count.gguf", patched_u64(model, tokens, std::uint64_t(1) << 60));
  const std::size_t context = value_offset(model, "llama.context_length");
  dir.write("context-0.gguf", patched_u32(model, context, 0));
  const std::size_t layers = value_offset(model, "llama.block_count");
  dir.write("layers.gguf", patched_u32(model, layers, 0xFFFFFFFF));
  // Whole files of another architecture, and of Qwen2 with scaled RoPE.
  TinyLlama mistral;
  mistral.architecture = "mistral";
  dir.write("architecture.gguf", read_bytes(mistral.write(dir, 7)));
  TinyLlama yarn;
  yarn.architecture = "qwen2";
  yarn.extra_metadata = {{"qwen2.rope.scaling.type", TestValue::string("yarn")}};
  dir.write("rope-scaling.gguf", read_bytes(yarn.write(dir, 7)));
}

void prepare_text_files(const TempDir& dir) {
  fs::create_directory(dir.path() / "folder");
  write_text(dir, "empty.txt", "");
  write_text(dir, "blank.txt", " \n\t\n");
  write_text(dir, "latin1.txt", "caf\xe9 au lait");
  write_text(dir, "overlong.txt", "a slash \xc0\xaf here");
  write_text(dir, "surrogate.txt", "a \xed\xa0\x80 surrogate");
  write_text(dir, "beyond-unicode.txt", "past \xf4\x90\x80\x80 U+10FFFF");
  write_text(dir, "cut-sequence.txt", "a euro cut short: \xe2\x82");
  write_text(dir, "nul.txt", std::string_view("text\0more", 9));
  write_text(dir, "long.txt", text_of(60000, "alpha beta gamma delta "));
  write_text(dir, "line.txt", text_of(10 << 20, "word "));
  write_text(dir, "broken.toml", "[engine\nplanner = \"cocktail\"\n");
  write_text(dir, "typo.toml", "[engine]\nplaner = \"cocktail\"\n");
  write_text(dir, "type.toml", "[planner.cocktail]\nchunk_size = \"big\"\n");
}

void prepare_eval_files(const TempDir& dir) {
  write_text(dir, "bad-json.jsonl", "{\"id\": \"a\", \"question\": \n");
  write_text(dir, "no-expected.jsonl",
             R"({"id": "a", "question": "Where?", "context": "Here."})"
             "\n");
  // Nested far deeper than any case, for a parser that would recurse once a level.
  write_text(dir, "nested.jsonl", std::string(100000, '[') + std::string(100000, ']') + "\n");
  for (const char* cases : {"bad-json", "no-expected", "nested"}) {
    write_text(dir, std::string(cases) + ".toml",
               "kinds = []\ncases = \"" + std::string(cases) + ".jsonl\"\n");
  }
  write_text(dir, "unknown-kind.toml", "kinds = [\"haystack\"]\n");
}

void prepare_plugin_folders(const TempDir& dir) {
  fs::create_directory(dir.path() / "empty-plugin");
  write_text(dir, "empty-plugin/cocktail-empty.so", "");
  fs::create_directory(dir.path() / "foreign-plugin");
  fs::copy_file(COCKTAIL_FOREIGN_LIBRARY, dir.path() / "foreign-plugin/cocktail-foreign.so");
}

// ---- The rows ----

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// `cocktail run` on the model file `name` of the folder.
std::vector<std::string> run_model(const std::string& name) {
  return {"run",        "--set", "model.path={dir}/" + name, "--context", "Some text.",
          "--question", "What?"};
}

std::vector<std::string> run_real(const std::vector<std::string>& more) {
  return with({"run", "--config", shipped_config("default.toml")}, more);
}

// `cocktail plan` with a text scorer: with the default attention scorer it would run the model
// before it reaches what these rows check.
std::vector<std::string> plan(const std::vector<std::string>& more) {
  return with({"plan", "--set", "engine.scorer=bm25"}, more);
}

std::vector<std::string> bench_attention(const std::vector<std::string>& more) {
  return with({"bench", "attention", "--repeat", "1"}, more);
}

std::vector<std::string> eval_suite(const std::string& suite) {
  return {"eval", "--suite", "{dir}/" + suite, "--methods", "fp16", "--max-tokens", "2"};
}

// `cocktail plan` with the plugin folder or file `path` and its `kind` (engine.<kind>) set to
// `name`.
std::vector<std::string> with_plugin(const std::string& path, const std::string& name,
                                     const std::string& kind = "planner") {
  return plan(
      {"--set", "engine.plugin_paths=['" + path + "']", "--set", "engine." + kind + "=" + name});
}

std::vector<BadInput> config_rows() {
  return {
      {"config_missing",
       plan({"--config", "{dir}/missing.toml"}),
       {"{dir}/missing.toml", "cannot read"}},
      {"config_is_a_folder", plan({"--config", "{dir}/folder"}), {"{dir}/folder"}},
      {"config_syntax", plan({"--config", "{dir}/broken.toml"}), {"{dir}/broken.toml:1"}},
      {"config_unknown_key",
       plan({"--config", "{dir}/typo.toml"}),
       {"{dir}/typo.toml:2", "engine.planer"}},
      {"config_wrong_type",
       plan({"--config", "{dir}/type.toml"}),
       {"{dir}/type.toml:2", "planner.cocktail.chunk_size"}},
      {"set_without_value", plan({"--set", "engine.planner"}), {"--set", "engine.planner"}},
      {"set_unknown_section",
       plan({"--set", "nosuch.key=1"}),
       {"--set [nosuch] is an unknown table"}},
      {"set_chunk_size_zero",
       plan({"--set", "planner.cocktail.chunk_size=0"}),
       {"planner.cocktail.chunk_size", "out of range"}},
      {"set_alpha_nan",
       plan({"--set", "planner.cocktail.alpha=nan"}),
       {"planner.cocktail.alpha", "nan"}},
      {"set_alpha_out_of_range",
       plan({"--set", "planner.cocktail.alpha=1.5"}),
       {"--set planner.cocktail.alpha = 1.5", "out of range"}},
      {"set_unknown_planner", plan({"--set", "engine.planner=nosuch"}), {"planner", "nosuch"}},
      {"set_unknown_backend", plan({"--set", "engine.backend=nosuch"}), {"backend", "nosuch"}},
      // A device that is not there: the error lists the backend's devices.
      {"set_missing_device",
       plan({"--set", "engine.backend=cpu", "--set", "engine.device=3"}),
       {"backend 'cpu' has no device '3'; its devices:", "\n  0: "}},
      {"set_unknown_device_name",
       plan({"--set", "engine.backend=cpu", "--set", "engine.device=nosuch"}),
       {"backend 'cpu' has no device 'nosuch'"}},
      {"set_negative_device",
       plan({"--set", "engine.device=-1"}),
       {"engine.device", "= -1 is not allowed; allowed: an index from 0 or a name"}},
      {"set_empty_scorer", plan({"--set", "engine.scorer=''"}), {"engine.scorer"}},
      {"set_unknown_simd_target",
       plan({"--set", "backend.cpu.simd=AVX9"}),
       {"--set backend.cpu.simd = \"AVX9\": not a SIMD target Highway has for this "
        "architecture; this CPU runs: "}},
      {"plan_shape_with_attention_scorer",
       plan({"--set", "engine.scorer=attention", "--layers", "4"}),
       {"--layers, --kv-heads and --head-dim give the KV shape for text scorers",
        "the attention scorer runs the model"}},
  };
}

std::vector<BadInput> model_rows() {
  std::vector<BadInput> rows = {
      {"model_missing",
       run_model("missing.gguf"),
       {"{dir}/missing.gguf not found", "scripts/fetch-models"}},
      {"model_zero_bytes", run_model("zero.gguf"), {"{dir}/zero.gguf"}},
      {"model_is_a_folder", run_model("folder.gguf"), {"{dir}/folder.gguf is a directory"}},
      {"model_is_a_fifo", run_model("fifo.gguf"), {"{dir}/fifo.gguf is not a regular file"}},
      {"model_flipped_magic", run_model("magic.gguf"), {"{dir}/magic.gguf", "magic"}},
      {"model_flipped_version", run_model("version.gguf"), {"{dir}/version.gguf", "version"}},
      {"model_huge_tensor_count",
       run_model("tensor-count.gguf"),
       {"{dir}/tensor-count.gguf", "tensor count"}},
      {"model_huge_metadata_count",
       run_model("metadata-count.gguf"),
       {"{dir}/metadata-count.gguf", "metadata key count at byte offset 16"}},
      {"model_huge_key_length", run_model("key-length.gguf"), {"{dir}/key-length.gguf", "offset"}},
      {"model_huge_string_length",
       run_model("string-length.gguf"),
       {"{dir}/string-length.gguf", "offset"}},
      {"model_huge_array_count",
       run_model("array-count.gguf"),
       {"{dir}/array-count.gguf", "offset"}},
      {"model_context_length_zero",
       run_model("context-0.gguf"),
       {"{dir}/context-0.gguf", "llama.context_length = 0 is out of range"}},
      {"model_huge_layer_count",
       run_model("layers.gguf"),
       {"{dir}/layers.gguf", "llama.block_count = 4294967295 is out of range"}},
      {"model_other_architecture",
       run_model("architecture.gguf"),
       {"{dir}/architecture.gguf",
        "general.architecture = 'mistral' is not supported; supported: llama, qwen2"}},
      {"model_scaled_rope",
       run_model("rope-scaling.gguf"),
       {"{dir}/rope-scaling.gguf",
        "qwen2.rope.scaling.type = 'yarn' is not supported; supported: none"}},
  };
  // Root reads a file whatever its mode says, so the file is only unreadable to others.
  if (geteuid() != 0) {
    rows.push_back({"model_unreadable",
                    run_model("unreadable.gguf"),
                    {"{dir}/unreadable.gguf", "Permission denied"}});
  }
  for (const std::string& cut : kCuts) {
    const std::string file = "cut-" + cut + ".gguf";
    rows.push_back({"model_cut_at_" + cut, run_model(file), {"{dir}/" + file}});
  }
  return rows;
}

std::vector<BadInput> context_rows() {
  return {
      {"context_empty", run_real({"--context", "", "--question", "What?"}), {"--context is empty"}},
      {"context_file_empty",
       plan({"--context-file", "{dir}/empty.txt", "--query", "q"}),
       {"--context-file {dir}/empty.txt is empty"}},
      {"context_file_blank",
       plan({"--context-file", "{dir}/blank.txt", "--query", "q"}),
       {"--context-file {dir}/blank.txt is empty"}},
      {"context_file_is_a_folder",
       run_real({"--context-file", "{dir}/folder"}),
       {"{dir}/folder: it is a directory"}},
      {"context_file_missing",
       plan({"--context-file", "{dir}/missing.txt"}),
       {"cannot read {dir}/missing.txt: No such file or directory"}},
      {"context_invalid_utf8",
       plan({"--context-file", "{dir}/latin1.txt", "--query", "q"}),
       {"--context-file {dir}/latin1.txt is not valid UTF-8 at byte 3"}},
      {"context_overlong_utf8",
       plan({"--context-file", "{dir}/overlong.txt", "--query", "q"}),
       {"--context-file {dir}/overlong.txt is not valid UTF-8 at byte 8"}},
      {"context_utf8_surrogate",
       plan({"--context-file", "{dir}/surrogate.txt", "--query", "q"}),
       {"--context-file {dir}/surrogate.txt is not valid UTF-8 at byte 2"}},
      {"context_utf8_beyond_unicode",
       plan({"--context-file", "{dir}/beyond-unicode.txt", "--query", "q"}),
       {"--context-file {dir}/beyond-unicode.txt is not valid UTF-8 at byte 5"}},
      {"context_utf8_cut_sequence",
       plan({"--context-file", "{dir}/cut-sequence.txt", "--query", "q"}),
       {"--context-file {dir}/cut-sequence.txt is not valid UTF-8 at byte 18"}},
      {"context_nul_byte",
       run_real({"--context-file", "{dir}/nul.txt", "--question", "q"}),
       {"--context-file {dir}/nul.txt holds a NUL byte at byte 4"}},
      {"context_longer_than_the_model",
       run_real({"--context-file", "{dir}/long.txt", "--question", "What comes after beta?"}),
       {"more than the model's context length of 8192", "--truncate-context"}},
      {"context_10mb_line",
       run_real({"--context-file", "{dir}/line.txt", "--question", "Which?"}),
       {"more than the model's context length of 8192"}},
  };
}

std::vector<BadInput> question_rows() {
  return {
      {"question_empty", run_real({"--question", ""}), {"--question is empty"}},
      {"question_blank",
       run_real({"--context", "Some text.", "--question", " \t"}),
       {"--question is empty"}},
      {"question_missing_with_a_context",
       run_real({"--context", "Some text."}),
       {"--question is required with your own context"}},
      {"question_invalid_utf8",
       run_real({"--question", "caf\xe9?"}),
       {"--question is not valid UTF-8 at byte 3"}},
      {"query_empty", plan({"--query", ""}), {"--query is empty"}},
      {"query_missing_with_a_context",
       plan({"--context", "Some text."}),
       {"--query is required with your own context"}},
  };
}

std::vector<BadInput> max_tokens_rows() {
  return {
      {"max_tokens_zero", run_real({"--max-tokens", "0"}), {"--max-tokens", "0"}},
      {"max_tokens_negative", run_real({"--max-tokens", "-5"}), {"--max-tokens", "-5"}},
      {"max_tokens_not_a_number", run_real({"--max-tokens", "many"}), {"--max-tokens", "many"}},
      {"max_tokens_overflow",
       run_real({"--max-tokens", "99999999999999999999"}),
       {"--max-tokens", "99999999999999999999"}},
      {"max_tokens_beyond_the_model",
       run_real({"--max-tokens", "100000"}),
       {"max new tokens = 100000 is out of range", "context length is 8192"}},
      {"eval_max_tokens_zero",
       with(eval_suite("bad-json.toml"), {"--max-tokens", "0"}),
       {"--max-tokens", "0"}},
  };
}

std::vector<BadInput> plugin_rows() {
  return {
      {"plugin_foreign_library",
       with_plugin("{dir}/foreign-plugin", "foreign"),
       {"{dir}/foreign-plugin/cocktail-foreign.so refused", "not a Cocktail plugin",
        "no planner plugin named 'foreign'"}},
      {"plugin_empty_file",
       with_plugin("{dir}/empty-plugin", "empty"),
       {"{dir}/empty-plugin/cocktail-empty.so refused", "cannot be loaded",
        "no planner plugin named 'empty'"}},
      {"plugin_wrong_abi",
       with_plugin(COCKTAIL_TEST_PLUGIN_ABI_NEXT, "test-abi-next"),
       {std::string(COCKTAIL_TEST_PLUGIN_ABI_NEXT) + " refused", "ABI",
        "no planner plugin named 'test-abi-next'"}},
      // A backend built before Compute::rope took a RopeStyle.
      {"plugin_previous_abi_backend",
       with_plugin(COCKTAIL_TEST_PLUGIN_ABI_PREVIOUS, "test-abi-previous", "backend"),
       {std::string(COCKTAIL_TEST_PLUGIN_ABI_PREVIOUS) + " refused",
        "built for plugin ABI " + std::to_string(kAbiMajor - 1) + ".0, this host speaks ABI " +
            std::to_string(kAbiMajor) + "." + std::to_string(kAbiMinor) +
            "; rebuild the plugin against this Cocktail",
        "no backend plugin named 'test-abi-previous'"}},
      {"plugin_missing_entry",
       with_plugin(COCKTAIL_TEST_PLUGIN_NO_ENTRY, "test-no-entry"),
       {std::string(COCKTAIL_TEST_PLUGIN_NO_ENTRY) + " refused", "does not export",
        "no planner plugin named 'test-no-entry'"}},
      // Plugins whose methods throw a type of their own: the error is the host's, read after
      // the plugin is unloaded, and names the plugin.
      {"plugin_planner_throws",
       with_plugin(COCKTAIL_TEST_PLUGIN_THROWS_PLANNER, "test-throws"),
       {"planner 'test-throws' (cocktail-test-throws-planner.so): thrown by plan"}},
      {"plugin_scorer_throws",
       with_plugin(COCKTAIL_TEST_PLUGIN_THROWS_SCORER, "test-throws", "scorer"),
       {"scorer 'test-throws' (cocktail-test-throws-scorer.so): thrown by use_backend"}},
      {"plugin_backend_throws",
       with_plugin(COCKTAIL_TEST_PLUGIN_THROWS_BACKEND, "test-throws", "backend"),
       {"backend 'test-throws' (cocktail-test-throws-backend.so): thrown by "
        "BackendProvider::availability"}},
  };
}

std::vector<BadInput> eval_rows() {
  return {
      {"eval_suite_missing", eval_suite("missing.toml"), {"{dir}/missing.toml"}},
      {"eval_cases_bad_json", eval_suite("bad-json.toml"), {"bad-json.jsonl:1"}},
      {"eval_case_without_expected",
       eval_suite("no-expected.toml"),
       {"no-expected.jsonl:1", "expected"}},
      {"eval_cases_deeply_nested",
       eval_suite("nested.toml"),
       {"nested.jsonl:1", "nests arrays and objects more than 16 deep"}},
      {"eval_haystack_missing",
       {"eval", "--methods", "fp16", "--haystack", "{dir}/missing"},
       {"the haystack folder {dir}/missing does not exist or is not a folder"}},
      {"eval_haystack_without_text",
       {"eval", "--methods", "fp16", "--haystack", "{dir}/folder"},
       {"the haystack folder {dir}/folder has no .txt file with text"}},
      {"eval_unknown_kind", eval_suite("unknown-kind.toml"), {"haystack"}},
      {"eval_unknown_method", {"eval", "--methods", "fp16,int3"}, {"'int3'"}},
  };
}

std::vector<BadInput> bench_rows() {
  const std::vector<std::string> decode = {"bench", "decode", "--config",
                                           shipped_config("default.toml")};
  return {
      {"bench_context_tokens_zero",
       bench_attention({"--context-tokens", "0"}),
       {"--context-tokens", "0"}},
      {"bench_context_tokens_absurd",
       bench_attention({"--context-tokens", "1099511627776"}),
       {"--context-tokens", "1099511627776"}},
      {"bench_cache_beyond_memory",
       bench_attention({"--context-tokens", "16777216", "--kv-heads", "256", "--head-dim", "1024"}),
       {"bench attention over 16777216 tokens", "needs 52776558133248 bytes (48.0 TiB)",
        "available"}},
      {"bench_head_dim_not_a_multiple_of_32",
       bench_attention({"--head-dim", "48"}),
       {"head_dim 48 is not a multiple of 32"}},
      {"bench_kv_heads_zero", bench_attention({"--kv-heads", "0"}), {"--kv-heads", "0"}},
      {"bench_mix_sum",
       bench_attention({"--mix", "0.5,0.5,0.5"}),
       {"--mix 0.5,0.5,0.5", "sum to 1"}},
      {"bench_mix_nan", bench_attention({"--mix", "nan,0,1"}), {"--mix nan,0,1"}},
      {"bench_mix_negative", bench_attention({"--mix", "-0.5,0.5,1"}), {"--mix -0.5,0.5,1"}},
      {"bench_mix_two_fractions", bench_attention({"--mix", "0.5,0.5"}), {"--mix"}},
      {"bench_decode_context_tokens_zero",
       with(decode, {"--context-tokens", "0"}),
       {"--context-tokens", "0"}},
      {"bench_decode_beyond_the_model",
       with(decode, {"--context-tokens", "1000000"}),
       {"--context-tokens 1000000 and --gen-tokens 32", "context length of 8192"}},
      {"bench_decode_gen_tokens_zero", with(decode, {"--gen-tokens", "0"}), {"--gen-tokens", "0"}},
      {"bench_decode_context_file_empty",
       with(decode, {"--context-file", "{dir}/empty.txt"}),
       {"--context-file {dir}/empty.txt is empty"}},
      {"bench_decode_synthetic_unknown_shape",
       {"bench", "decode", "--synthetic", "llama3"},
       {"no synthetic model shape named 'llama3'; shapes: tiny (context 4096), smollm2-135m "
        "(context 36864), llama2-7b (context 36864)"}},
      {"bench_decode_synthetic_beyond_its_context",
       {"bench", "decode", "--synthetic", "tiny", "--context-tokens", "5000"},
       {"--context-tokens 5000 and --gen-tokens 32 do not fit the synthetic tiny model's context "
        "length of 4096; the shapes: tiny (context 4096), smollm2-135m (context 36864), "
        "llama2-7b (context 36864)"}},
  };
}

std::vector<BadInput> output_rows() {
  return {
      {"eval_json_into_a_missing_folder",
       {"eval", "--methods", "fp16", "--json", "{dir}/missing/results.json"},
       {"cannot write {dir}/missing/results.json: No such file or directory"}},
      {"eval_report_on_a_file",
       {"eval", "--methods", "fp16", "--report", "{dir}/empty.txt"},
       {"cannot make the report folder {dir}/empty.txt"}},
      {"plan_svg_unwritable",
       plan({"--svg", "{dir}/missing/plan.svg"}),
       {"cannot write {dir}/missing/plan.svg"}},
  };
}

std::vector<BadInput> catalogue() {
  std::vector<BadInput> rows;
  for (auto part : {config_rows, model_rows, context_rows, question_rows, max_tokens_rows,
                    plugin_rows, eval_rows, bench_rows, output_rows}) {
    const std::vector<BadInput> more = part();
    rows.insert(rows.end(), more.begin(), more.end());
  }
  return rows;
}

// ---- The test ----

class BadInputTest : public ::testing::TestWithParam<BadInput> {
 public:
  static void SetUpTestSuite() {
    files_ = std::make_unique<TempDir>();
    prepare_model_files(*files_);
    prepare_text_files(*files_);
    prepare_eval_files(*files_);
    prepare_plugin_folders(*files_);
  }
  static void TearDownTestSuite() { files_.reset(); }

 protected:
  static std::unique_ptr<TempDir> files_;
};

std::unique_ptr<TempDir> BadInputTest::files_;

TEST_P(BadInputTest, FailsNamingWhatAndWhere) {
  const std::string dir = files_->path().string();
  std::vector<std::string> args;
  for (const std::string& arg : GetParam().args) args.push_back(expand(arg, dir));
  const CliResult r = run_cli(args);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  for (const std::string& message : GetParam().messages) {
    EXPECT_THAT(r.err, HasSubstr(expand(message, dir)));
  }
  expect_no_sanitizer_report(r);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInputTest, ::testing::ValuesIn(catalogue()),
                         [](const ::testing::TestParamInfo<BadInput>& row) {
                           return row.param.name;
                         });

}  // namespace
}  // namespace cocktail::testing
