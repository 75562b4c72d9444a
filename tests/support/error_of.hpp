#pragma once

#include <gtest/gtest.h>

#include <string>

namespace cocktail::testing {

// The message of the `E` that `action` throws; a test failure when it throws none.
template <class E, class Action>
std::string error_of(Action&& action) {
  try {
    action();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "nothing of the expected error type was thrown";
  return {};
}

}  // namespace cocktail::testing
