#include "common/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <memory>
#include <string_view>

namespace hal {
namespace {

spdlog::level::level_enum level_from_env() {
  const char* value = std::getenv("HAL_LOG_LEVEL");
  if (value == nullptr || *value == '\0') return spdlog::level::warn;
  std::string_view text(value);
  if (text == "trace") return spdlog::level::trace;
  if (text == "debug") return spdlog::level::debug;
  if (text == "info") return spdlog::level::info;
  if (text == "warn" || text == "warning") return spdlog::level::warn;
  if (text == "error") return spdlog::level::err;
  if (text == "off") return spdlog::level::off;
  return spdlog::level::warn;
}

spdlog::logger* make_logger() {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto* logger = new spdlog::logger("hal", std::move(sink));
  logger->set_pattern("[hal %l] %v");
  logger->set_level(level_from_env());
  const char* value = std::getenv("HAL_LOG_LEVEL");
  if (value != nullptr && *value != '\0' && logger->level() == spdlog::level::warn &&
      std::string_view(value) != "warn" && std::string_view(value) != "warning") {
    logger->warn(
        "HAL_LOG_LEVEL='{}' is not one of trace, debug, info, warn, error, off; using warn", value);
  }
  return logger;
}

}  // namespace

spdlog::logger* log() {
  // Intentionally leaked: logging must keep working while other statics are destroyed at exit.
  static spdlog::logger* logger = make_logger();
  return logger;
}

}  // namespace hal
