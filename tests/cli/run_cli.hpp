#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cocktail::testing {

// What one run of the `cocktail` binary left behind.
struct CliResult {
  int exit_code = -1;  // -1 when the process did not exit normally
  std::string out;
  std::string err;
};

// Runs the built `cocktail` binary with `args` and waits for it.
CliResult run_cli(const std::vector<std::string>& args);

// The JSON a successful run printed; a test failure (and a discarded value) when the run failed
// or printed something else.
nlohmann::json json_of(const CliResult& result);

// A test failure when stderr holds a report of AddressSanitizer or UndefinedBehaviorSanitizer.
void expect_no_sanitizer_report(const CliResult& result);

// A shipped config, by file name ("default.toml").
std::string shipped_config(const std::string& name);

// A fresh folder for the files one test writes, removed with everything in it at the end.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::filesystem::path path(const std::string& name) const { return dir_ / name; }
  // Writes `text` to `name` in the folder and returns the file's path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path dir_;
};

// The whole content of a file; empty when it cannot be read.
std::string read_file(const std::filesystem::path& path);

}  // namespace cocktail::testing
