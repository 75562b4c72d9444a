#pragma once

// Shared by the test plugins that throw from every entry point: an exception type of the
// plugin's own (hidden in its library, so its type information dies with the library), and the
// message each throw carries, naming the method that threw.
#include <stdexcept>
#include <string>

namespace cocktail_test {

class PluginOwnError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_from(const char* method) {
  throw PluginOwnError(std::string("thrown by ") + method);
}

}  // namespace cocktail_test
