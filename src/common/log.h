// The runtime's logger: spdlog to stderr, level from HAL_LOG_LEVEL
// (trace|debug|info|warn|error|off, default warn). The logger is private to hal: it is not
// registered in spdlog's global registry, so a host application's loggers are untouched.
#pragma once

#include <spdlog/logger.h>

namespace hal {

spdlog::logger* log();

}  // namespace hal
