// What a driver module uses of the core's services, through hal_driver_host: hal::log() and
// hal::trace (trace.h) as the core itself has them, so backend code reads the same inside a
// module as it does linked into a program. Built into driver modules only; a program that
// links a driver in has the core's own implementations.
#include "common/driver_export.h"
#include "common/log.h"
#include "common/trace.h"

#include <spdlog/sinks/base_sink.h>

#include <cstdio>
#include <mutex>
#include <string>

namespace hal {
namespace {

hal_driver_log_level to_driver(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return HAL_DRIVER_LOG_DEBUG;
    case spdlog::level::info:
      return HAL_DRIVER_LOG_INFO;
    case spdlog::level::warn:
      return HAL_DRIVER_LOG_WARN;
    default:
      return HAL_DRIVER_LOG_ERROR;
  }
}

// Hands every message to the core's log; before init (nothing should log then) to stderr.
class HostSink : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string text(msg.payload.data(), msg.payload.size());
    if (const hal_driver_host* host = attached_host()) {
      host->log(to_driver(msg.level), text.c_str());
    } else {
      std::fprintf(stderr, "[hal] %s\n", text.c_str());
    }
  }
  void flush_() override {}
};

spdlog::logger* make_logger() {
  auto* logger = new spdlog::logger("hal", std::make_shared<HostSink>());
  // The level the core logs at (HAL_LOG_LEVEL), so that messages below it are never formatted.
  spdlog::level::level_enum level = spdlog::level::warn;
  if (const hal_driver_host* host = attached_host()) {
    level = spdlog::level::off;
    for (auto candidate :
         {spdlog::level::debug, spdlog::level::info, spdlog::level::warn, spdlog::level::err}) {
      if (host->log_enabled(to_driver(candidate))) {
        level = candidate;
        break;
      }
    }
  }
  logger->set_level(level);
  return logger;
}

}  // namespace

spdlog::logger* log() {
  // Leaked on purpose, as the core's: logging must work while statics are destroyed at exit.
  static spdlog::logger* logger = make_logger();
  return logger;
}

namespace trace {
namespace detail {
std::atomic<bool> g_on{false};  // set from the core's switch when the driver initialises
}  // namespace detail

uint64_t now_ns() {
  const hal_driver_host* host = attached_host();
  return host != nullptr ? host->trace_now_ns() : 0;
}

uint32_t stream_row(const hal_device_info& device) {
  const hal_driver_host* host = attached_host();
  Device* d = device_with_info(device);
  return host != nullptr && d != nullptr ? host->trace_stream_row(handle_of(d)) : 0;
}

void device_span(const hal_device_info& device, uint32_t row, const Op& op, uint64_t begin_ns,
                 uint64_t end_ns) noexcept {
  const hal_driver_host* host = attached_host();
  Device* d = device_with_info(device);
  if (host == nullptr || d == nullptr) return;
  hal_driver_trace_op out{};
  switch (op.kind) {
    case Op::Kind::kKernel:
      out.kind = HAL_DRIVER_TRACE_KERNEL;
      break;
    case Op::Kind::kCopyHostToDevice:
      out.kind = HAL_DRIVER_TRACE_COPY_HTOD;
      break;
    case Op::Kind::kCopyDeviceToHost:
      out.kind = HAL_DRIVER_TRACE_COPY_DTOH;
      break;
    case Op::Kind::kCopyDeviceToDevice:
      out.kind = HAL_DRIVER_TRACE_COPY_DTOD;
      break;
    case Op::Kind::kFill:
      out.kind = HAL_DRIVER_TRACE_FILL;
      break;
  }
  out.kernel = op.kernel.c_str();
  for (int i = 0; i < 3; ++i) {
    out.grid[i] = op.grid[i];
    out.block[i] = op.block[i];
  }
  out.shared_bytes = op.shared_bytes;
  out.on_host = op.on_host ? 1 : 0;
  out.bytes = op.bytes;
  host->trace_span(handle_of(d), row, &out, begin_ns, end_ns);
}

}  // namespace trace
}  // namespace hal
