// The core's services for drivers (hal_driver_host): hal's log, the timeline trace and the
// device-lost latch.
#include "common/driver.h"
#include "common/log.h"
#include "common/objects.h"
#include "common/trace.h"

#include <map>
#include <mutex>

namespace hal {
namespace {

spdlog::level::level_enum to_spdlog(hal_driver_log_level level) {
  switch (level) {
    case HAL_DRIVER_LOG_DEBUG:
      return spdlog::level::debug;
    case HAL_DRIVER_LOG_INFO:
      return spdlog::level::info;
    case HAL_DRIVER_LOG_WARN:
      return spdlog::level::warn;
    case HAL_DRIVER_LOG_ERROR:
      return spdlog::level::err;
  }
  return spdlog::level::warn;
}

void host_log(hal_driver_log_level level, const char* message) {
  if (message != nullptr) log()->log(to_spdlog(level), "{}", message);
}

int host_log_enabled(hal_driver_log_level level) {
  return log()->should_log(to_spdlog(level)) ? 1 : 0;
}

int host_trace_enabled() {
  return trace::on() ? 1 : 0;
}

uint64_t host_trace_now_ns() {
  return trace::now_ns();
}

std::mutex g_devices_mutex;
std::map<hal_driver_device, DeviceObject*>* g_devices = nullptr;  // leaked: used at exit

DeviceObject* find_device(hal_driver_device device) {
  std::lock_guard lock(g_devices_mutex);
  if (g_devices == nullptr) return nullptr;
  auto it = g_devices->find(device);
  return it == g_devices->end() ? nullptr : it->second;
}

const hal_device_info* find_info(hal_driver_device device) {
  const DeviceObject* object = find_device(device);
  return object != nullptr ? &object->info : nullptr;
}

uint32_t host_trace_stream_row(hal_driver_device device) {
  const hal_device_info* info = find_info(device);
  return info != nullptr ? trace::stream_row(*info) : 0;
}

void host_trace_span(hal_driver_device handle, uint32_t row, const hal_driver_trace_op* op,
                     uint64_t begin_ns, uint64_t end_ns) {
  const hal_device_info* device = find_info(handle);
  if (device == nullptr || op == nullptr || !trace::on()) return;
  trace::Op out;
  switch (op->kind) {
    case HAL_DRIVER_TRACE_KERNEL:
      out = trace::Op::kernel_launch(op->kernel != nullptr ? op->kernel : "?", op->grid, op->block,
                                     op->shared_bytes);
      break;
    case HAL_DRIVER_TRACE_COPY_HTOD:
      out = trace::Op::transfer(trace::Op::Kind::kCopyHostToDevice, op->bytes);
      break;
    case HAL_DRIVER_TRACE_COPY_DTOH:
      out = trace::Op::transfer(trace::Op::Kind::kCopyDeviceToHost, op->bytes);
      break;
    case HAL_DRIVER_TRACE_COPY_DTOD:
      out = trace::Op::transfer(trace::Op::Kind::kCopyDeviceToDevice, op->bytes);
      break;
    case HAL_DRIVER_TRACE_FILL:
      out = trace::Op::transfer(trace::Op::Kind::kFill, op->bytes);
      break;
    default:
      return;
  }
  out.on_host = op->on_host != 0;
  trace::device_span(*device, row, out, begin_ns, end_ns);
}

void host_device_lost(hal_driver_device device, const char* cause) {
  if (DeviceObject* object = find_device(device)) object->mark_lost(cause != nullptr ? cause : "");
}

int host_device_is_lost(hal_driver_device device) {
  const DeviceObject* object = find_device(device);
  return object != nullptr && object->lost.load() ? 1 : 0;
}

const hal_driver_host kHost = {
    sizeof(hal_driver_host),
    HAL_DRIVER_INTERFACE_VERSION,
    &host_log,
    &host_log_enabled,
    &host_trace_enabled,
    &host_trace_now_ns,
    &host_trace_stream_row,
    &host_trace_span,
    &host_device_lost,
    &host_device_is_lost,
};

}  // namespace

bool register_driver_device(hal_driver_device device, DeviceObject* object) {
  std::lock_guard lock(g_devices_mutex);
  if (g_devices == nullptr) g_devices = new std::map<hal_driver_device, DeviceObject*>();
  return g_devices->emplace(device, object).second;
}

const hal_driver_host* driver_host() {
  return &kHost;
}

}  // namespace hal
