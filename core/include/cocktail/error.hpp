#pragma once

#include <stdexcept>
#include <string>

namespace cocktail {

// Every error the library reports is a cocktail::Error (or a subclass): the message says what
// was wrong and where, so a host can show it as it is. The destructors are defined in the core
// library, so the type information of these errors lives there alone and never in a plugin's
// library, which may be unloaded before a host is done with an error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  ~Error() override;
};

// A bad config value or key; the message names file, line and key.
class ConfigError : public Error {
 public:
  using Error::Error;
  ~ConfigError() override;
};

// A plugin that could not be loaded or created; the message names the file and the reason.
class PluginError : public Error {
 public:
  using Error::Error;
  ~PluginError() override;
};

}  // namespace cocktail
