#include "cocktail/error.hpp"

namespace cocktail {

// Out of line on purpose: the key functions that anchor the errors' vtables in this library.
Error::~Error() = default;
ConfigError::~ConfigError() = default;
PluginError::~PluginError() = default;

}  // namespace cocktail
