#include "host_double.h"

#include "common/driver_export.h"
#include "common/log.h"

#include <map>
#include <mutex>

namespace hal_test {
namespace {

std::mutex g_mutex;
std::map<hal_driver_device, std::string>* g_lost = nullptr;  // guarded by g_mutex

spdlog::level::level_enum to_spdlog(hal_driver_log_level level) {
  switch (level) {
    case HAL_DRIVER_LOG_DEBUG:
      return spdlog::level::debug;
    case HAL_DRIVER_LOG_INFO:
      return spdlog::level::info;
    case HAL_DRIVER_LOG_WARN:
      return spdlog::level::warn;
    default:
      return spdlog::level::err;
  }
}

const hal_driver_host kHostDouble = {
    sizeof(hal_driver_host),
    HAL_DRIVER_INTERFACE_VERSION,
    [](hal_driver_log_level level, const char* message) {
      hal::log()->log(to_spdlog(level), "{}", message != nullptr ? message : "");
    },
    [](hal_driver_log_level level) { return hal::log()->should_log(to_spdlog(level)) ? 1 : 0; },
    [] { return 0; },
    []() -> uint64_t { return 0; },
    [](hal_driver_device) -> uint32_t { return 0; },
    [](hal_driver_device, uint32_t, const hal_driver_trace_op*, uint64_t, uint64_t) {},
    [](hal_driver_device device, const char* cause) {
      std::lock_guard lock(g_mutex);
      if (g_lost != nullptr) g_lost->emplace(device, cause != nullptr ? cause : "");
    },
    [](hal_driver_device device) {
      std::lock_guard lock(g_mutex);
      return g_lost != nullptr && g_lost->count(device) != 0 ? 1 : 0;
    },
};

hal_driver_device handle(const hal::Device& device) {
  return hal::handle_of(const_cast<hal::Device*>(&device));
}

}  // namespace

HostDouble::HostDouble() : previous_(hal::attached_host()) {
  {
    std::lock_guard lock(g_mutex);
    g_lost = new std::map<hal_driver_device, std::string>();
  }
  hal::attach_host_for_testing(&kHostDouble);
}

HostDouble::~HostDouble() {
  hal::attach_host_for_testing(previous_);
  std::lock_guard lock(g_mutex);
  delete g_lost;
  g_lost = nullptr;
}

bool HostDouble::lost(const hal::Device& device) const {
  std::lock_guard lock(g_mutex);
  return g_lost != nullptr && g_lost->count(handle(device)) != 0;
}

std::string HostDouble::cause(const hal::Device& device) const {
  std::lock_guard lock(g_mutex);
  if (g_lost == nullptr) return "";
  auto it = g_lost->find(handle(device));
  return it == g_lost->end() ? "" : it->second;
}

}  // namespace hal_test
