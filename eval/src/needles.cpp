#include "cocktail/eval/needles.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <random>

#include "cocktail/error.hpp"
#include "seeded_random.hpp"

namespace cocktail::eval {

namespace {

// One way to state a fact and to ask for it, alone or as a list.
struct Phrasing {
  const char* statement;  // {0} = subject, {1} = answer
  const char* one_of;     // {0} = subject, {1} = one of its answers
  const char* question;   // {0} = subject
  const char* plural;     // {0} = the subjects, listed
};

constexpr std::array kPhrasings = {
    Phrasing{"The secret code for {0} is {1}.", "One of the secret codes for {0} is {1}.",
             "What is the secret code for {0}?", "What are the secret codes for {0}?"},
    Phrasing{"The combination of {0} is {1}.", "One of the combinations of {0} is {1}.",
             "What is the combination of {0}?", "What are the combinations of {0}?"},
    Phrasing{"The serial number of {0} is {1}.", "One of the serial numbers of {0} is {1}.",
             "What is the serial number of {0}?", "What are the serial numbers of {0}?"},
};

constexpr std::array kColours = {"blue",   "red",   "green",   "amber", "silver", "violet",
                                 "copper", "ivory", "scarlet", "teal",  "golden", "indigo"};
constexpr std::array kPlaces = {"vault",     "lighthouse", "greenhouse", "observatory",
                                "boathouse", "library",    "workshop",   "cellar",
                                "chapel",    "windmill",   "harbour",    "archive"};

bool holds(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// A number with `digits` digits that the haystack does not hold and `taken` does not either.
std::string fresh_number(std::mt19937_64& rng, int digits, std::string_view haystack,
                         const std::vector<std::string>& taken) {
  std::uint64_t lo = 1;
  for (int i = 1; i < digits; ++i) lo *= 10;
  for (;;) {
    std::string number = std::to_string(draw(rng, lo, lo * 10 - 1));
    if (haystack.find(number) == std::string_view::npos && !holds(taken, number)) return number;
  }
}

bool holds_ignoring_case(std::string_view text, std::string_view word) {
  const auto same = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  };
  return std::search(text.begin(), text.end(), word.begin(), word.end(), same) != text.end();
}

// Five capital letters that the haystack does not hold in any case, nor `taken`.
std::string fresh_name(std::mt19937_64& rng, std::string_view haystack,
                       const std::vector<std::string>& taken) {
  for (;;) {
    std::string name;
    for (int i = 0; i < 5; ++i) name += static_cast<char>('A' + draw(rng, 0, 25));
    if (!holds_ignoring_case(haystack, name) && !holds(taken, name)) return name;
  }
}

// "the blue vault", or "the vault numbered 482193" with a number the haystack does not hold.
// The place is drawn before the colour: the order GCC gave the cases of earlier runs, when the
// two draws were arguments of one call.
std::string draw_subject(std::mt19937_64& rng, KeyKind keys, std::string_view haystack) {
  const char* place = kPlaces[draw(rng, 0, kPlaces.size() - 1)];
  if (keys == KeyKind::numbers) {
    return fmt::format("the {} numbered {}", place, fresh_number(rng, 6, haystack, {}));
  }
  return fmt::format("the {} {}", kColours[draw(rng, 0, kColours.size() - 1)], place);
}

// Facts in one phrasing: subject i has answer i.
struct Facts {
  const Phrasing* phrasing = nullptr;
  std::vector<std::string> subjects;
  std::vector<std::string> answers;
};

// The phrasing, then per fact a subject not drawn before and a fresh 7-digit answer.
Facts draw_facts(std::mt19937_64& rng, int count, KeyKind keys, std::string_view haystack) {
  if (count < 1 || (keys == KeyKind::words && count > int(kColours.size() * kPlaces.size()))) {
    throw Error(fmt::format("cannot make {} distinct needles; allowed: 1 to {}", count,
                            kColours.size() * kPlaces.size()));
  }
  Facts facts{&kPhrasings[draw(rng, 0, kPhrasings.size() - 1)], {}, {}};
  while (int(facts.subjects.size()) < count) {
    std::string subject = draw_subject(rng, keys, haystack);
    if (holds(facts.subjects, subject)) continue;
    facts.answers.push_back(fresh_number(rng, 7, haystack, facts.answers));
    facts.subjects.push_back(std::move(subject));
  }
  return facts;
}

// One needle per fact, stated with `form` ({0} = subject, {1} = answer).
std::vector<Needle> stated(const Facts& facts, const char* form) {
  std::vector<Needle> needles;
  for (std::size_t i = 0; i < facts.subjects.size(); ++i) {
    needles.push_back(
        {fmt::format(fmt::runtime(form), facts.subjects[i], facts.answers[i]), facts.answers[i]});
  }
  return needles;
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

NeedleSet make_code_needles(std::uint64_t seed, int count, std::string_view haystack,
                            KeyKind keys) {
  std::mt19937_64 rng(seed);
  const Facts facts = draw_facts(rng, count, keys, haystack);
  const Phrasing& phrasing = *facts.phrasing;
  const std::string question =
      count == 1 ? fmt::format(fmt::runtime(phrasing.question), facts.subjects.front())
                 : fmt::format(fmt::runtime(phrasing.plural), listed(facts.subjects));
  return {stated(facts, phrasing.statement), question};
}

NeedleSet make_multi_key_needles(std::uint64_t seed, int count, std::string_view haystack) {
  std::mt19937_64 rng(seed);
  const Facts facts = draw_facts(rng, count, KeyKind::words, haystack);
  return {stated(facts, facts.phrasing->statement),
          fmt::format(fmt::runtime(facts.phrasing->question), facts.subjects.front()),
          facts.subjects.size() - 1};
}

NeedleSet make_multi_value_needles(std::uint64_t seed, int count, std::string_view haystack) {
  std::mt19937_64 rng(seed);
  Facts facts = draw_facts(rng, 1, KeyKind::words, haystack);
  while (int(facts.answers.size()) < count) {
    facts.answers.push_back(fresh_number(rng, 7, haystack, facts.answers));
    facts.subjects.push_back(facts.subjects.front());
  }
  return {stated(facts, facts.phrasing->one_of),
          fmt::format(fmt::runtime(facts.phrasing->plural), facts.subjects.front())};
}

NeedleSet make_variable_chain(std::uint64_t seed, int count, std::string_view haystack) {
  if (count < 1) throw Error(fmt::format("cannot make a chain of {} variables", count));
  std::mt19937_64 rng(seed);
  const std::string value = fresh_number(rng, 5, haystack, {});
  std::vector<std::string> names;
  NeedleSet set;
  for (int i = 0; i < count; ++i) {
    names.push_back(fresh_name(rng, haystack, names));
    const std::string bound = i == 0 ? value : "VAR " + names[std::size_t(i) - 1];
    set.needles.push_back({fmt::format("VAR {} = {}.", names.back(), bound), names.back()});
  }
  set.question = fmt::format(
      "The text above hides a chain of variable assignments. Find all variables that are "
      "assigned the value {}, directly or through other variables.",
      value);
  return set;
}

NeedleSet make_passkey(std::uint64_t seed, std::string_view haystack) {
  std::mt19937_64 rng(seed);
  const std::string key = fresh_number(rng, 5, haystack, {});
  return {{{fmt::format("The pass key is {}. Remember it.", key), key}}, "What is the pass key?"};
}

}  // namespace cocktail::eval
