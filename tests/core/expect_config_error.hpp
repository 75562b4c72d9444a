#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "cocktail/error.hpp"

namespace cocktail::testing {

// Passes when `action` throws a ConfigError whose message holds every one of `parts`; the
// message is printed on failure so a wrong wording is easy to see.
inline ::testing::AssertionResult throws_config_error(
    const std::function<void()>& action, std::initializer_list<std::string_view> parts) {
  try {
    action();
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    for (std::string_view part : parts) {
      if (message.find(part) == std::string::npos) {
        return ::testing::AssertionFailure() << "\"" << message << "\" lacks \"" << part << "\"";
      }
    }
    return ::testing::AssertionSuccess() << message;
  }
  return ::testing::AssertionFailure() << "no ConfigError was thrown";
}

}  // namespace cocktail::testing
