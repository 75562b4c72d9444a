// Arbitrary bytes as a JSONL case file: parsing must give cases or throw cocktail::Error.
// context_file paths start in a folder that does not exist, so no real file is read.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cocktail/error.hpp"
#include "cocktail/eval/case_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)cocktail::eval::parse_cases_jsonl(text, "fuzz.jsonl", "/nonexistent-cocktail-fuzz");
  } catch (const cocktail::Error&) {
    // A refused file is the expected outcome for most inputs.
  }
  return 0;
}
