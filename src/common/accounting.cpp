#include "common/accounting.h"

#include "common/handles.h"
#include "common/log.h"
#include "common/objects.h"
#include "common/registry.h"

#include <fmt/format.h>

#include <cstdlib>
#include <mutex>

namespace hal {
namespace {

std::string plural(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

void report_leaks_at_exit() {
  const std::vector<std::string> lines = describe_leaks(count_live(registry()));
  if (lines.empty()) return;
  spdlog::logger* logger = log();
  logger->warn("leak report at exit: the program did not release everything it got from hal:");
  for (const std::string& line : lines) logger->warn("  {}", line);
  logger->flush();
}

}  // namespace

LiveCounts count_live(const Registry& reg) {
  LiveCounts counts;
  const HandleCounts handles = live_handle_counts();
  counts.devices = handles.of(HandleKind::kDevice);
  counts.streams = handles.of(HandleKind::kStream);
  counts.events = handles.of(HandleKind::kEvent);
  counts.modules = handles.of(HandleKind::kModule);
  counts.functions = handles.of(HandleKind::kFunction);
  for (const auto& device : reg.devices) {
    DeviceLiveMemory memory;
    memory.device = device->label;
    memory.device_allocations = device->allocations.size();
    memory.device_bytes = device->allocations.bytes();
    {
      std::lock_guard lock(device->host_mutex);
      memory.host_allocations = device->host_allocations.size();
      for (const auto& [pointer, host] : device->host_allocations) memory.host_bytes += host.size;
    }
    if (memory.device_allocations == 0 && memory.host_allocations == 0) continue;
    counts.device_allocations += memory.device_allocations;
    counts.device_bytes += memory.device_bytes;
    counts.host_allocations += memory.host_allocations;
    counts.host_bytes += memory.host_bytes;
    counts.memory.push_back(std::move(memory));
  }
  return counts;
}

std::vector<std::string> describe_leaks(const LiveCounts& counts) {
  std::vector<std::string> lines;
  if (counts.streams > 0) {
    lines.push_back(plural(counts.streams, "stream", "streams") + " (hal_stream_destroy)");
  }
  if (counts.events > 0) {
    lines.push_back(plural(counts.events, "event", "events") + " (hal_event_destroy)");
  }
  if (counts.modules > 0) {
    lines.push_back(fmt::format("{}, with {} (hal_module_unload)",
                                plural(counts.modules, "module", "modules"),
                                plural(counts.functions, "function handle", "function handles")));
  }
  for (const DeviceLiveMemory& memory : counts.memory) {
    if (memory.device_allocations > 0) {
      lines.push_back(
          fmt::format("{}, {} bytes in all, on {} (hal_mem_free)",
                      plural(memory.device_allocations, "device allocation", "device allocations"),
                      memory.device_bytes, memory.device));
    }
    if (memory.host_allocations > 0) {
      lines.push_back(
          fmt::format("{}, {} bytes in all, on {} (hal_host_free)",
                      plural(memory.host_allocations, "host allocation", "host allocations"),
                      memory.host_bytes, memory.device));
    }
  }
  return lines;
}

void install_leak_report_at_exit() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The logger first: what it creates must still exist when the report runs, and exit handlers
    // and static destructors run in the reverse order of their registration.
    log();
    if (std::atexit(&report_leaks_at_exit) != 0) {
      log()->warn("could not install the leak report at exit (atexit failed)");
    }
  });
}

}  // namespace hal
