#pragma once

#include <stdexcept>
#include <string>

namespace cocktail {

// Every error the library reports is a cocktail::Error (or a subclass): the message says what
// was wrong and where, so a host can show it as it is.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad config value or key; the message names file, line and key.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A plugin that could not be loaded or created; the message names the file and the reason.
class PluginError : public Error {
 public:
  using Error::Error;
};

}  // namespace cocktail
