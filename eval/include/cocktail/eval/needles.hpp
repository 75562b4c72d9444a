#pragma once

#include <cstddef>
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

// The needles of one case and the question about them.
struct NeedleSet {
  std::vector<Needle> needles;
  std::string question;
  // How many needles, at the end of `needles`, the question does not ask about: multi-key's
  // distractors. The question asks for the answers of all the others.
  std::size_t distractors = 0;
};

// What the made-up subject of a fact is named by: words ("the blue vault") or a number that the
// haystack does not hold ("the vault numbered 482193"), as RULER's word and number keys.
enum class KeyKind { words, numbers };

// `count` facts in one phrasing ("The secret code for the blue vault is 7391042.") about
// distinct made-up subjects, each with its own 7-digit answer that `haystack` does not contain,
// so no answer is right by chance. One needle gets "What is ...?"; several get one question that
// lists every subject (RULER's multi-query). The same seed gives the same needles. `count` is 1
// to 144 with word keys.
NeedleSet make_code_needles(std::uint64_t seed, int count, std::string_view haystack,
                            KeyKind keys = KeyKind::words);

// RULER's multi-key: `count` facts as make_code_needles() makes them; the question asks for the
// first one's answer, and the other count - 1, of the same form with other keys, are distractors.
NeedleSet make_multi_key_needles(std::uint64_t seed, int count, std::string_view haystack);

// RULER's multi-value: `count` facts about one subject, each with its own answer ("One of the
// secret codes for the blue vault is 7391042."), asked for together ("What are the secret codes
// for the blue vault?").
NeedleSet make_multi_value_needles(std::uint64_t seed, int count, std::string_view haystack);

// RULER's variable tracking: a chain of `count` variables, one statement per needle in chain
// order, "VAR QKZTB = 48213." then "VAR WMLOA = VAR QKZTB." and so on; each needle's answer is
// the variable it binds. The question gives the value and asks for every variable bound to it.
// Names are 5 capital letters that `haystack` does not hold in any case, the value 5 digits it
// does not hold. `count` is 1 or more.
NeedleSet make_variable_chain(std::uint64_t seed, int count, std::string_view haystack);

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
