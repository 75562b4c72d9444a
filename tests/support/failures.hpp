#pragma once

#include <functional>
#include <string>

namespace cocktail::testing {

// Counts failed element checks and keeps the first, so one bad block reports once.
struct Failures {
  int count = 0;
  std::string first;

  void add(bool ok, const std::function<std::string()>& what) {
    if (ok) return;
    if (count++ == 0) first = what();
  }
};

}  // namespace cocktail::testing
