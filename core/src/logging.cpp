#include "cocktail/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>

#include "cocktail/error.hpp"

namespace cocktail {

namespace {

spdlog::level::level_enum parse_level(const std::string& name) {
  const auto level = spdlog::level::from_str(name);
  // from_str maps unknown names to "off"; only accept "off" when it was asked for.
  if (level == spdlog::level::off && name != "off") {
    throw Error("unknown log level '" + name + "'; allowed: trace, debug, info, warn, error, off");
  }
  return level;
}

std::shared_ptr<spdlog::logger> make_logger() {
  auto logger = spdlog::stderr_color_mt("cocktail");
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
  logger->set_level(spdlog::level::info);
  if (const char* env = std::getenv("COCKTAIL_LOG"); env && *env) {
    logger->set_level(parse_level(env));
  }
  return logger;
}

}  // namespace

spdlog::logger& log() {
  static const std::shared_ptr<spdlog::logger> logger = make_logger();
  return *logger;
}

void set_log_level(const std::string& level) {
  const spdlog::level::level_enum parsed = parse_level(level);
  // The environment wins over the config, so a user can turn on debug output without editing it.
  if (const char* env = std::getenv("COCKTAIL_LOG"); env && *env) return;
  log().set_level(parsed);
}

}  // namespace cocktail
