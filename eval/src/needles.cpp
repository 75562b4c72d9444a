#include "cocktail/eval/needles.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <random>

#include "cocktail/error.hpp"

namespace cocktail::eval {

namespace {

// One way to state a fact and to ask for it, alone or as a list.
struct Phrasing {
  const char* statement;  // {0} = subject, {1} = answer
  const char* question;   // {0} = subject
  const char* plural;     // {0} = the subjects, listed
};

constexpr std::array kPhrasings = {
    Phrasing{"The secret code for {0} is {1}.", "What is the secret code for {0}?",
             "What are the secret codes for {0}?"},
    Phrasing{"The combination of {0} is {1}.", "What is the combination of {0}?",
             "What are the combinations of {0}?"},
    Phrasing{"The serial number of {0} is {1}.", "What is the serial number of {0}?",
             "What are the serial numbers of {0}?"},
};

constexpr std::array kColours = {"blue",   "red",   "green",   "amber", "silver", "violet",
                                 "copper", "ivory", "scarlet", "teal",  "golden", "indigo"};
constexpr std::array kPlaces = {"vault",     "lighthouse", "greenhouse", "observatory",
                                "boathouse", "library",    "workshop",   "cellar",
                                "chapel",    "windmill",   "harbour",    "archive"};

// The standard fixes mt19937_64's output but not the distributions', so draws use a modulo
// (its bias is far below anything a test could see) to give every platform the same needles.
std::uint64_t draw(std::mt19937_64& rng, std::uint64_t lo, std::uint64_t hi) {
  return lo + rng() % (hi - lo + 1);
}

// A number with `digits` digits that the haystack does not hold and `taken` does not either.
std::string fresh_number(std::mt19937_64& rng, int digits, std::string_view haystack,
                         const std::vector<std::string>& taken) {
  std::uint64_t lo = 1;
  for (int i = 1; i < digits; ++i) lo *= 10;
  for (;;) {
    std::string number = std::to_string(draw(rng, lo, lo * 10 - 1));
    if (haystack.find(number) == std::string_view::npos &&
        std::find(taken.begin(), taken.end(), number) == taken.end()) {
      return number;
    }
  }
}

// "the blue vault, the red cellar and the green archive"
std::string listed(const std::vector<std::string>& subjects) {
  std::string text = subjects.front();
  for (std::size_t i = 1; i < subjects.size(); ++i) {
    text += (i + 1 == subjects.size() ? " and " : ", ") + subjects[i];
  }
  return text;
}

}  // namespace

NeedleSet make_code_needles(std::uint64_t seed, int count, std::string_view haystack) {
  if (count < 1 || count > static_cast<int>(kColours.size() * kPlaces.size())) {
    throw Error(fmt::format("cannot make {} distinct needles; allowed: 1 to {}", count,
                            kColours.size() * kPlaces.size()));
  }
  std::mt19937_64 rng(seed);
  const Phrasing& phrasing = kPhrasings[draw(rng, 0, kPhrasings.size() - 1)];
  std::vector<std::string> subjects, answers;
  NeedleSet set;
  while (static_cast<int>(set.needles.size()) < count) {
    std::string subject = fmt::format("the {} {}", kColours[draw(rng, 0, kColours.size() - 1)],
                                      kPlaces[draw(rng, 0, kPlaces.size() - 1)]);
    if (std::find(subjects.begin(), subjects.end(), subject) != subjects.end()) continue;
    std::string answer = fresh_number(rng, 7, haystack, answers);
    set.needles.push_back({fmt::format(fmt::runtime(phrasing.statement), subject, answer), answer});
    subjects.push_back(std::move(subject));
    answers.push_back(std::move(answer));
  }
  set.question = count == 1 ? fmt::format(fmt::runtime(phrasing.question), subjects.front())
                            : fmt::format(fmt::runtime(phrasing.plural), listed(subjects));
  return set;
}

NeedleSet make_passkey(std::uint64_t seed, std::string_view haystack) {
  std::mt19937_64 rng(seed);
  const std::string key = fresh_number(rng, 5, haystack, {});
  return {{{fmt::format("The pass key is {}. Remember it.", key), key}}, "What is the pass key?"};
}

}  // namespace cocktail::eval
