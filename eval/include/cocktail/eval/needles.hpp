#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cocktail::eval {

// One fact hidden in a context, and what a reader must answer to show it found it.
struct Needle {
  std::string sentence;  // "The secret code for the blue vault is 7391042."
  std::string answer;    // "7391042"
};

// The needles of one case and the question that asks for all of them.
struct NeedleSet {
  std::vector<Needle> needles;
  std::string question;
};

// `count` facts in one phrasing ("The secret code for the blue vault is 7391042.") about
// distinct made-up subjects, each with its own 7-digit answer that `haystack` does not contain,
// so no answer is right by chance. One needle gets "What is ...?"; several get one question that
// lists every subject. The same seed gives the same needles. `count` is 1 to 144.
NeedleSet make_code_needles(std::uint64_t seed, int count, std::string_view haystack);

// A needle someone wrote (a suite's `needle_file`): a statement that holds the answer, the
// question that asks for it, and the answer.
struct WrittenNeedle {
  std::string statement;  // "The lighthouse keeper's parrot is called Biscuit."
  std::string question;   // "What is the lighthouse keeper's parrot called?"
  std::string answer;     // "Biscuit"
  int line = 0;           // where the file states it, for errors
};

// The classic passkey: "The pass key is 48213. Remember it." with a 5-digit key absent from
// `haystack`, asked as "What is the pass key?".
NeedleSet make_passkey(std::uint64_t seed, std::string_view haystack);

// The classic passkey filler; a generated context repeats it as often as its length needs.
inline constexpr std::string_view kPasskeyFiller =
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";

}  // namespace cocktail::eval
