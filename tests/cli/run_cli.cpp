#include "run_cli.hpp"

#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <array>
#include <fstream>
#include <sstream>
#include <system_error>

namespace cocktail::testing {

namespace {

namespace fs = std::filesystem;

// Single quotes keep every character but the single quote itself, which is closed, escaped
// and reopened.
std::string shell_quote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string read_all(FILE* stream) {
  std::string text;
  std::array<char, 4096> buffer;
  while (const std::size_t n = fread(buffer.data(), 1, buffer.size(), stream)) {
    text.append(buffer.data(), n);
  }
  return text;
}

}  // namespace

CliResult run_cli(const std::vector<std::string>& args) {
  // popen captures stdout only, so stderr goes through a file.
  const ScratchDir scratch;
  const fs::path err_file = scratch.path("stderr");
  std::string command = shell_quote(COCKTAIL_CLI_PATH);
  for (const std::string& arg : args) command += " " + shell_quote(arg);
  command += " 2>" + shell_quote(err_file.string());

  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot start " << command;
    return result;
  }
  result.out = read_all(pipe);
  const int status = pclose(pipe);
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.err = read_file(err_file);
  return result;
}

nlohmann::json json_of(const CliResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.err;
  nlohmann::json parsed = nlohmann::json::parse(result.out, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) ADD_FAILURE() << "not JSON:\n" << result.out;
  return parsed;
}

void expect_no_sanitizer_report(const CliResult& result) {
  for (const char* report : {"runtime error:", "AddressSanitizer", "LeakSanitizer"}) {
    EXPECT_EQ(result.err.find(report), std::string::npos) << result.err;
  }
}

std::string shipped_config(const std::string& name) {
  return (fs::path(COCKTAIL_SOURCE_DIR) / "configs" / name).string();
}

ScratchDir::ScratchDir() {
  std::string pattern = (fs::temp_directory_path() / "cocktail-cli-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "cannot create " << pattern;
  dir_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

std::string ScratchDir::write(const std::string& name, const std::string& text) const {
  const fs::path file = path(name);
  std::ofstream(file, std::ios::binary) << text;
  return file.string();
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace cocktail::testing
