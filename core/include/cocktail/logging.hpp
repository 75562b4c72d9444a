#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace cocktail {

// The library's logger ("cocktail", to stderr). Its level comes from the config's
// engine.log_level; the environment variable COCKTAIL_LOG overrides it.
spdlog::logger& log();

// Sets the level by name (trace, debug, info, warn, error, off); throws Error on a bad name.
void set_log_level(const std::string& level);

}  // namespace cocktail
