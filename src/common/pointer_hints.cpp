#include "common/pointer_hints.h"

#include "common/registry.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace hal {
namespace {

// The label of the device whose hal_host_alloc memory holds |address|, or "".
std::string host_allocation_of(uint64_t address) {
  for (const auto& device : registry().devices) {
    std::lock_guard lock(device->host_mutex);
    auto it = device->host_allocations.upper_bound(reinterpret_cast<void*>(address));
    if (it == device->host_allocations.begin()) continue;
    --it;
    const uint64_t base = reinterpret_cast<uint64_t>(it->first);
    if (address - base < it->second.size) return device->label;
  }
  return "";
}

// The mapping of this process that holds |address|: its name ("[heap]", "[stack]", a file), or
// "anonymous memory"; "" when the address is not mapped (or the map cannot be read).
std::string host_mapping_of(uint64_t address) {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return "";
  std::string found;
  char line[4096];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long long begin = 0, end = 0;
    int name_at = 0;
    if (std::sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &begin, &end, &name_at) < 2) continue;
    if (address < begin || address >= end) continue;
    std::string name = name_at > 0 ? line + name_at : "";
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
    found = name.empty() ? "anonymous memory" : name;
    break;
  }
  std::fclose(maps);
  return found;
}

}  // namespace

std::string pointer_hint(hal_deviceptr value) {
  if (value == 0) return "";
  hal_driver_allocation live{};
  for (const auto& device : registry().devices) {
    if (device->allocations.find(value, &live)) return "";  // the message names its device
  }
  hal_driver_allocation freed{};
  for (const auto& device : registry().devices) {
    if (device->allocations.find_freed(value, &freed)) {
      return fmt::format(
          "It lies in [{:#x}, +{}), which was allocated on {} and has been freed: a launch must "
          "not use memory after hal_mem_free",
          freed.base, freed.size, device->label);
    }
  }
  const std::string host_device = host_allocation_of(value);
  if (!host_device.empty()) {
    return fmt::format(
        "It is host memory from hal_host_alloc (on {}), which kernels cannot take: copy it into "
        "hal_mem_alloc memory with hal_memcpy_htod and pass that",
        host_device);
  }
  // A value parameter's bytes in a pointer slot: args[] is shifted, or a value was passed where
  // &pointer belongs. Such bytes are small: a count, a size, or a float's bits; a 4-byte value
  // read as 8 bytes keeps them in its low half, with whatever followed it above.
  const uint32_t low = static_cast<uint32_t>(value);
  float as_float = 0;
  std::memcpy(&as_float, &low, sizeof as_float);
  const float magnitude = std::fabs(as_float);
  const bool plausible_float = std::isfinite(as_float) && magnitude >= 1e-6f && magnitude < 1e9f;
  const std::string as_value = fmt::format(
      "the integer {}{}", low, plausible_float ? fmt::format(", or the float {}", as_float) : "");
  const char* shifted =
      "is args[] shifted, with a value where this pointer belongs? args[i] must point to "
      "parameter i's value: &ptr for a pointer from hal_mem_alloc";
  if (value <= 0xFFFFFFFFu) {
    return fmt::format("It looks like a 32-bit value ({}), not an address: {}", as_value, shifted);
  }
  const std::string mapping = host_mapping_of(value);
  if (!mapping.empty()) {
    return fmt::format(
        "It lies in this process's host memory ({}): a host address, not a device pointer. "
        "Allocate with hal_mem_alloc, fill it with hal_memcpy_htod, and pass &ptr in args",
        mapping);
  }
  if (low < (1u << 24) || plausible_float) {
    return fmt::format(
        "Its low 32 bits are {}, as if a 4-byte value were read as a pointer's 8 bytes: {}",
        as_value, shifted);
  }
  return "";
}

}  // namespace hal
