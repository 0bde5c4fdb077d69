#include "common/driver.h"

#include "common/error.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstring>

namespace hal {
namespace {

// The entries of interface version 1, in table order. Every later entry will be optional: an
// older driver's table ends before it. The one list that says which entries a driver must give.
struct EntryRule {
  size_t offset;
  const char* name;
  bool required;
};
#define HAL_DRIVER_ENTRY(member, required) \
  { offsetof(hal_driver, member), #member, required }
constexpr EntryRule kEntries[] = {
    HAL_DRIVER_ENTRY(error_message, true),
    HAL_DRIVER_ENTRY(init, true),
    HAL_DRIVER_ENTRY(device_get, true),
    HAL_DRIVER_ENTRY(device_synchronize, true),
    HAL_DRIVER_ENTRY(mem_alloc, true),
    HAL_DRIVER_ENTRY(mem_free, true),
    HAL_DRIVER_ENTRY(host_alloc, false),
    HAL_DRIVER_ENTRY(host_free, false),
    HAL_DRIVER_ENTRY(host_pointer, false),
    HAL_DRIVER_ENTRY(stream_create, true),
    HAL_DRIVER_ENTRY(stream_destroy, true),
    HAL_DRIVER_ENTRY(stream_synchronize, true),
    HAL_DRIVER_ENTRY(stream_query, true),
    HAL_DRIVER_ENTRY(copy_htod, true),
    HAL_DRIVER_ENTRY(copy_dtoh, true),
    HAL_DRIVER_ENTRY(copy_dtod, true),
    HAL_DRIVER_ENTRY(fill, true),
    HAL_DRIVER_ENTRY(launch, true),
    HAL_DRIVER_ENTRY(event_create, true),
    HAL_DRIVER_ENTRY(event_destroy, true),
    HAL_DRIVER_ENTRY(event_record, true),
    HAL_DRIVER_ENTRY(stream_wait, true),
    HAL_DRIVER_ENTRY(event_synchronize, true),
    HAL_DRIVER_ENTRY(event_query, true),
    HAL_DRIVER_ENTRY(event_elapsed_ms, false),
    HAL_DRIVER_ENTRY(module_load, true),
    HAL_DRIVER_ENTRY(module_function, true),
    HAL_DRIVER_ENTRY(module_unload, true),
};
#undef HAL_DRIVER_ENTRY
// The table of version 1 ends with its last entry: a driver's struct_size must reach it.
constexpr size_t kVersion1Size = offsetof(hal_driver, module_unload) + sizeof(void*);

bool entry_present(const hal_driver& table, const EntryRule& rule) {
  void* value = nullptr;
  std::memcpy(&value, reinterpret_cast<const char*>(&table) + rule.offset, sizeof(value));
  return value != nullptr;
}

hal_status check_table(const hal_driver* given, const std::string& origin, Driver* out) {
  if (given == nullptr) {
    return failf(HAL_ERROR_UNAVAILABLE,
                 "{}: hal_driver_query succeeded but gave no table (NULL). The driver is broken",
                 origin);
  }
  if (given->interface_version > HAL_DRIVER_INTERFACE_VERSION) {
    return failf(HAL_ERROR_UNAVAILABLE,
                 "{} was built for hal driver interface version {}, newer than this libhal's {}. "
                 "Update hal, or use a build of the driver for interface {}",
                 origin, given->interface_version, HAL_DRIVER_INTERFACE_VERSION,
                 HAL_DRIVER_INTERFACE_VERSION);
  }
  if (given->interface_version == 0 || given->struct_size < kVersion1Size) {
    return failf(HAL_ERROR_UNAVAILABLE,
                 "{} is not a valid hal driver: its table says interface version {} and "
                 "struct_size {}, but version 1's table is {} bytes. Rebuild the driver against "
                 "hal_driver.h",
                 origin, given->interface_version, given->struct_size, kVersion1Size);
  }
  if (!valid_backend_name(given->name)) {
    return failf(HAL_ERROR_UNAVAILABLE,
                 "{} names its backend '{}', which is not 1 to 31 of a-z, 0-9 and _ starting "
                 "with a letter",
                 origin, given->name ? given->name : "(NULL)");
  }
  // The kind says which public enum value its devices report: CUDA and Vulkan belong to the
  // backends of those names; any other driver is HAL_BACKEND_UNKNOWN.
  const bool kind_ok =
      given->backend == HAL_BACKEND_UNKNOWN ||
      (given->backend == HAL_BACKEND_CUDA && std::strcmp(given->name, "cuda") == 0) ||
      (given->backend == HAL_BACKEND_VULKAN && std::strcmp(given->name, "vulkan") == 0);
  if (!kind_ok) {
    return failf(HAL_ERROR_UNAVAILABLE,
                 "{} (backend '{}') says it is of kind {}; only the backends named 'cuda' and "
                 "'vulkan' are HAL_BACKEND_CUDA and HAL_BACKEND_VULKAN, any other is "
                 "HAL_BACKEND_UNKNOWN",
                 origin, given->name, static_cast<int>(given->backend));
  }
  // Copy what the driver declared; the rest (entries of later versions) stays NULL.
  const size_t n =
      given->struct_size < sizeof(hal_driver) ? given->struct_size : sizeof(hal_driver);
  std::memcpy(static_cast<void*>(&out->table), given, n);
  for (const EntryRule& rule : kEntries) {
    if (rule.required && !entry_present(out->table, rule)) {
      return failf(HAL_ERROR_UNAVAILABLE,
                   "{} (backend '{}') leaves the required entry '{}' NULL. Implement it (see "
                   "hal_driver.h)",
                   origin, given->name, rule.name);
    }
  }
  if ((out->table.host_alloc == nullptr) != (out->table.host_free == nullptr)) {
    return failf(HAL_ERROR_UNAVAILABLE,
                 "{} (backend '{}') gives one of host_alloc and host_free but not the other",
                 origin, given->name);
  }
  return HAL_SUCCESS;
}

hal_status query_table(hal_driver_query_fn query, const std::string& origin,
                       std::unique_ptr<Driver>* out) {
  const hal_driver* table = nullptr;
  const hal_status status = query(HAL_DRIVER_INTERFACE_VERSION, &table);
  if (status != HAL_SUCCESS) {
    return failf(HAL_ERROR_UNAVAILABLE, "{}: hal_driver_query failed with {}", origin,
                 status_name(status));
  }
  auto driver = std::make_unique<Driver>();
  driver->origin = origin;
  if (hal_status s = check_table(table, origin, driver.get()); s != HAL_SUCCESS) return s;
  *out = std::move(driver);
  return HAL_SUCCESS;
}

}  // namespace

bool valid_backend_name(const char* name) {
  if (name == nullptr || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  size_t length = 0;
  for (const char* c = name; *c != '\0'; ++c, ++length) {
    const bool ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_';
    if (!ok || length >= 31) return false;
  }
  return true;
}

std::string name_from_module_path(const std::string& path) {
  std::string file = path.substr(path.find_last_of('/') + 1);
  const std::string prefix = "libhal_driver_";
  const size_t dot = file.find(".so");
  if (file.rfind(prefix, 0) == 0 && dot != std::string::npos && dot > prefix.size()) {
    return file.substr(prefix.size(), dot - prefix.size());
  }
  return file;
}

hal_status open_driver_module(const std::string& path, std::unique_ptr<Driver>* out) {
  // RTLD_LOCAL: a driver's own dependencies (its copy of a vendor loader, spdlog, ...) never
  // satisfy another module's symbols. Never closed: its code may run until exit.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return failf(HAL_ERROR_UNAVAILABLE, "{} does not load: {}", path, why ? why : "unknown error");
  }
  void* symbol = dlsym(library, HAL_DRIVER_QUERY_SYMBOL);
  if (symbol == nullptr) {
    return failf(HAL_ERROR_UNAVAILABLE,
                 "{} is not a hal driver: it exports no '{}'. A driver module defines it (see "
                 "hal_driver.h)",
                 path, HAL_DRIVER_QUERY_SYMBOL);
  }
  hal_driver_query_fn query = nullptr;
  static_assert(sizeof(query) == sizeof(symbol));
  std::memcpy(&query, &symbol, sizeof(query));
  return query_table(query, path, out);
}

hal_status adopt_driver(hal_driver_query_fn query, std::string origin,
                        std::unique_ptr<Driver>* out) {
  return query_table(query, origin, out);
}

}  // namespace hal
