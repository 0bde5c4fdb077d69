#include "common/registry.h"

#include "common/accounting.h"
#include "common/error.h"
#include "common/log.h"
#include "common/selector.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

namespace hal {
namespace {

// The built-in driver modules, in default order: names from the build (HAL_BUILTIN_DRIVERS,
// comma-separated, set by CMake to the backends it built).
std::vector<std::string> builtin_driver_names() {
  std::vector<std::string> names;
  std::stringstream stream(HAL_BUILTIN_DRIVERS);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) names.push_back(item);
  }
  return names;
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

// The driver modules in |dir|: libhal_driver_*.so, sorted by name.
std::vector<std::string> modules_in(const std::string& dir) {
  std::vector<std::string> files;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind("libhal_driver_", 0) == 0 && name.find(".so") != std::string::npos) {
        files.push_back(dir + "/" + name);
      }
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::once_flag g_once;
std::vector<InProcessDriver>* g_drivers_override = nullptr;
bool g_started = false;
Registry* g_registry = nullptr;

std::vector<std::string> split(const char* text, char separator, bool lower) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, separator)) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (lower) {
      for (char& c : item) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (!item.empty() && std::find(items.begin(), items.end(), item) == items.end()) {
      items.push_back(item);
    }
  }
  return items;
}

// A driver found (loaded or not), before HAL_BACKENDS selects.
struct Candidate {
  std::string name;
  std::string origin;
  std::unique_ptr<Driver> driver;  // null: |reason| says why
  std::string reason;
  bool listed = false;  // already in the backend list (HAL_BACKENDS may repeat a name)
};

Candidate candidate_from(hal_status status, std::unique_ptr<Driver> driver, std::string origin,
                         std::string fallback_name) {
  Candidate c;
  c.origin = std::move(origin);
  if (status == HAL_SUCCESS) {
    c.name = driver->table.name;
    c.driver = std::move(driver);
  } else {
    c.name = std::move(fallback_name);
    c.reason = pending_error().empty() ? status_name(status) : pending_error();
    log()->warn("driver module {}: {}", c.origin, c.reason);
  }
  clear_pending_error();
  return c;
}

Candidate load_module_candidate(const std::string& path) {
  std::unique_ptr<Driver> driver;
  const hal_status status = open_driver_module(path, &driver);
  return candidate_from(status, std::move(driver), path, name_from_module_path(path));
}

std::vector<Candidate> find_candidates() {
  std::vector<Candidate> found;
  if (g_drivers_override != nullptr) {
    for (const InProcessDriver& d : *g_drivers_override) {
      std::unique_ptr<Driver> driver;
      const hal_status status = adopt_driver(d.query, d.origin, &driver);
      found.push_back(candidate_from(status, std::move(driver), d.origin, d.origin));
    }
    return found;
  }
  const std::vector<std::string> dirs = builtin_driver_dirs();
  for (const std::string& name : builtin_driver_names()) {
    const std::string file = "libhal_driver_" + name + ".so";
    std::string path;
    for (const std::string& dir : dirs) {
      if (is_file(dir + "/" + file)) {
        path = dir + "/" + file;
        break;
      }
    }
    if (path.empty()) {
      Candidate c;
      c.name = name;
      if (!dirs.empty()) c.origin = dirs.front() + "/" + file;  // where it belongs
      c.reason = fmt::format(
          "{} is missing: looked in {}. The installation is incomplete; reinstall hal (its "
          "drivers live in <libdir>/hal/drivers)",
          file, fmt::join(dirs, " and "));
      log()->warn("{}", c.reason);
      found.push_back(std::move(c));
      continue;
    }
    found.push_back(load_module_candidate(path));
  }
  if (const char* env = std::getenv("HAL_DRIVER_PATH"); env != nullptr && *env != '\0') {
    for (const std::string& entry : split(env, ':', false)) {
      if (is_directory(entry)) {
        for (const std::string& path : modules_in(entry))
          found.push_back(load_module_candidate(path));
      } else if (is_file(entry)) {
        found.push_back(load_module_candidate(entry));
      } else {
        Candidate c;
        c.name = name_from_module_path(entry);
        c.origin = entry;
        c.reason = fmt::format(
            "HAL_DRIVER_PATH names '{}', which is neither a file nor a directory", entry);
        log()->warn("{}", c.reason);
        found.push_back(std::move(c));
      }
    }
  }
  // Two drivers under one name: the first found keeps it.
  for (size_t i = 0; i < found.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (found[i].driver && found[j].driver && found[i].name == found[j].name) {
        found[i].reason =
            fmt::format("backend name '{}' is already taken by {}", found[i].name, found[j].origin);
        found[i].driver.reset();
        log()->warn("driver module {}: {}", found[i].origin, found[i].reason);
        break;
      }
    }
  }
  return found;
}

void init_backend(BackendEntry& entry) {
  clear_pending_error();
  const hal_driver& driver = entry.driver->table;
  uint32_t count = 0;
  hal_status status = driver.init(driver_host(), &count);
  if (status != HAL_SUCCESS) {
    const char* message = driver.error_message();
    entry.available = false;
    entry.reason = message != nullptr && *message != '\0'
                       ? std::string(message)
                       : fmt::format("initialisation failed with {}", status_name(status));
    log()->info("backend {} unavailable: {}", entry.name, entry.reason);
    return;
  }
  entry.available = true;
  for (uint32_t i = 0; i < count; ++i) {
    auto object = std::make_shared<DeviceObject>();
    object->driver = entry.driver.get();
    object->info.struct_size = sizeof(hal_device_info);  // what the driver may write
    status = driver.device_get(i, &object->impl, &object->info);
    if (status != HAL_SUCCESS) {
      log()->warn("backend {}: device {} is left out: {}", entry.name, i, driver.error_message());
      continue;
    }
    object->backend = &entry;
    hal_device_info& info = object->info;
    info.struct_size = sizeof(hal_device_info);
    info.backend = entry.kind;
    std::memset(info.backend_name, 0, sizeof(info.backend_name));
    fmt::format_to_n(info.backend_name, sizeof(info.backend_name) - 1, "{}", entry.name);
    info.backend_index = static_cast<uint32_t>(entry.devices.size());
    // The driver's text fields end inside their arrays, whatever it wrote.
    info.name[sizeof(info.name) - 1] = '\0';
    info.driver_name[sizeof(info.driver_name) - 1] = '\0';
    info.driver_info[sizeof(info.driver_info) - 1] = '\0';
    object->label = fmt::format("{}:{} ({})", entry.name, entry.devices.size(), info.name);
    if (object->impl == nullptr || !register_driver_device(object->impl, object.get())) {
      log()->warn(
          "backend {}: device {} is left out: its handle {} is null or another device's "
          "(driver handles must be distinct pointers)",
          entry.name, i, static_cast<const void*>(object->impl));
      continue;
    }
    entry.devices.push_back(std::move(object));
  }
  log()->info("backend {}: {} device(s)", entry.name, entry.devices.size());
}

void build(Registry& reg) {
  std::vector<Candidate> candidates = find_candidates();
  for (const Candidate& c : candidates) {
    if (std::find(reg.known_names.begin(), reg.known_names.end(), c.name) ==
        reg.known_names.end()) {
      reg.known_names.push_back(c.name);
    }
  }

  std::vector<std::string> wanted = reg.known_names;
  if (const char* env = std::getenv("HAL_BACKENDS"); env != nullptr && *env != '\0') {
    wanted = split(env, ',', true);
    if (wanted.empty()) {
      reg.init_status = HAL_ERROR_INVALID_ARGUMENT;
      reg.init_message = fmt::format(
          "HAL_BACKENDS='{}' names no backend; unset it for all, or list names such as 'vulkan'",
          env);
      log()->warn("{}", reg.init_message);
    }
  }
  for (const std::string& name : wanted) {
    bool matched = false;
    for (Candidate& c : candidates) {
      if (c.name != name || c.listed) continue;
      matched = true;
      auto entry = std::make_unique<BackendEntry>();
      entry->name = name;
      entry->origin = c.origin;
      entry->reason = c.reason;
      entry->driver = std::move(c.driver);
      c.listed = true;
      if (entry->driver) {
        entry->kind = entry->driver->table.backend;
        init_backend(*entry);
      }
      reg.backends.push_back(std::move(entry));
    }
    if (matched) continue;
    auto entry = std::make_unique<BackendEntry>();
    entry->name = name;
    std::string known;
    for (const std::string& k : reg.known_names) known += (known.empty() ? "" : ", ") + k;
    entry->reason = fmt::format(
        "HAL_BACKENDS names '{}', which no driver provides. Backends found: {} (add a driver "
        "module with HAL_DRIVER_PATH)",
        name, known.empty() ? "none" : known);
    reg.init_status = HAL_ERROR_INVALID_ARGUMENT;
    reg.init_message += (reg.init_message.empty() ? "" : "; ") + entry->reason;
    log()->warn("{}", entry->reason);
    reg.backends.push_back(std::move(entry));
  }

  // Global order: GPUs first, then CPU devices; stable, so backend order holds within each.
  for (const auto& entry : reg.backends) {
    for (const auto& device : entry->devices) reg.devices.push_back(device);
  }
  std::stable_sort(reg.devices.begin(), reg.devices.end(),
                   [](const auto& a, const auto& b) { return !a->info.is_cpu && b->info.is_cpu; });
  for (size_t i = 0; i < reg.devices.size(); ++i) {
    reg.devices[i]->info.global_index = static_cast<uint32_t>(i);
    register_handle(reg.devices[i]);
  }
}

std::string device_list(const Registry& reg) {
  if (reg.devices.empty()) return "there are no devices (run hal-info to see why)";
  std::string out = "devices:";
  for (const auto& d : reg.devices) {
    out += fmt::format(" [{}] {};", d->info.global_index, d->label);
  }
  out.pop_back();
  return out;
}

hal_status resolve(const Registry& reg, const Selector& sel, std::string_view text,
                   std::shared_ptr<DeviceObject>* out) {
  switch (sel.kind) {
    case Selector::Kind::kDefault:
      if (reg.devices.empty()) {
        return fail(HAL_ERROR_NOT_FOUND,
                    "there are no devices. Run hal-info to see which backends are unavailable "
                    "and why");
      }
      *out = reg.devices.front();
      return HAL_SUCCESS;
    case Selector::Kind::kGlobalIndex:
      if (sel.index >= reg.devices.size()) {
        return failf(HAL_ERROR_NOT_FOUND, "device index {} is out of range; {}", sel.index,
                     device_list(reg));
      }
      *out = reg.devices[sel.index];
      return HAL_SUCCESS;
    case Selector::Kind::kBackendIndex: {
      // A name may be listed twice when one module of it failed (a broken built-in module and a
      // working one on HAL_DRIVER_PATH): the available one is the backend.
      const BackendEntry* named = nullptr;
      for (const auto& entry : reg.backends) {
        if (entry->name != sel.backend) continue;
        if (named == nullptr || (entry->available && !named->available)) named = entry.get();
      }
      if (named == nullptr) {
        return failf(HAL_ERROR_NOT_FOUND,
                     "selector '{}': the {} backend is not enabled (HAL_BACKENDS leaves it out)",
                     text, sel.backend);
      }
      if (!named->available) {
        return failf(HAL_ERROR_NOT_FOUND, "selector '{}': the {} backend is unavailable: {}", text,
                     named->name, named->reason);
      }
      if (sel.index >= named->devices.size()) {
        return failf(HAL_ERROR_NOT_FOUND, "selector '{}': the {} backend has {} device(s); {}",
                     text, named->name, named->devices.size(), device_list(reg));
      }
      *out = named->devices[sel.index];
      return HAL_SUCCESS;
    }
    case Selector::Kind::kName:
      for (const auto& d : reg.devices) {
        if (contains_ignore_case(d->info.name, sel.name)) {
          *out = d;
          return HAL_SUCCESS;
        }
      }
      return failf(HAL_ERROR_NOT_FOUND, "no device name contains '{}'; {}", sel.name,
                   device_list(reg));
  }
  return fail(HAL_ERROR_INTERNAL, "unknown selector kind");
}

}  // namespace

const Registry& registry() {
  std::call_once(g_once, [] {
    g_started = true;
    // Leaked on purpose: devices must outlive every static destructor that might still call in.
    g_registry = new Registry();
    build(*g_registry);
    // After the backends loaded their drivers: the report runs before the drivers' exit handlers.
    install_leak_report_at_exit();
  });
  return *g_registry;
}

bool set_drivers_for_testing(std::vector<InProcessDriver> drivers) {
  if (g_started) return false;
  g_drivers_override = new std::vector<InProcessDriver>(std::move(drivers));
  return true;
}

std::vector<std::string> builtin_driver_dirs() {
  // The directory of the image this code is in: libhal.so's, or a program's that links the
  // runtime statically (then the libraries are in ../<libdir>, as in an installed prefix and in
  // the build tree).
  Dl_info info{};
  std::string dir = ".";
  if (dladdr(reinterpret_cast<void*>(&builtin_driver_dirs), &info) != 0 && info.dli_fname) {
    dir = info.dli_fname;
    const size_t slash = dir.find_last_of('/');
    dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  }
  std::vector<std::string> dirs = {dir + "/hal/drivers",
                                   dir + "/../" HAL_INSTALL_LIBDIR "/hal/drivers"};
  if (std::string_view(HAL_INSTALL_LIBDIR) != "lib") dirs.push_back(dir + "/../lib/hal/drivers");
  return dirs;
}

hal_status find_device(std::string_view text, std::shared_ptr<DeviceObject>* out) {
  const Registry& reg = registry();
  Selector sel;
  if (hal_status s = parse_selector(text, reg.known_names, &sel); s != HAL_SUCCESS) return s;
  if (sel.kind == Selector::Kind::kDefault) {
    if (const char* env = std::getenv("HAL_DEVICE"); env != nullptr && *env != '\0') {
      Selector from_env;
      if (hal_status s = parse_selector(env, reg.known_names, &from_env); s != HAL_SUCCESS) {
        return failf(s, "HAL_DEVICE: {}", pending_error());
      }
      if (from_env.kind != Selector::Kind::kDefault) {
        if (hal_status s = resolve(reg, from_env, env, out); s != HAL_SUCCESS) {
          return failf(s, "HAL_DEVICE='{}': {}", env, pending_error());
        }
        return HAL_SUCCESS;
      }
    }
  }
  return resolve(reg, sel, text, out);
}

std::shared_ptr<DeviceObject> lookup_device(hal_device device) {
  registry();
  return find_as<DeviceObject>(device, HandleKind::kDevice, "device");
}

void DeviceObject::mark_lost(std::string_view cause) {
  std::lock_guard lock(lost_mutex_);
  if (lost.load()) return;
  lost_cause_ = cause.empty() ? "the driver gave no cause" : std::string(cause);
  lost.store(true);
  log()->error("device {} lost: {}", label, lost_cause_);
}

std::string DeviceObject::lost_cause() const {
  std::lock_guard lock(lost_mutex_);
  return lost_cause_;
}

hal_status driver_failure(DeviceObject& device, hal_status status) {
  const char* message = device.driver->table.error_message();
  const bool has_message = message != nullptr && *message != '\0';
  if (status == HAL_ERROR_DEVICE_LOST) {
    device.mark_lost(has_message ? std::string_view(message) : std::string_view());
  }
  if (has_message) return fail(status, message);
  return failf(status, "the driver of device {} failed with {} and gave no reason", device.label,
               status_name(status));
}

hal_status check_not_lost(const DeviceObject& device) {
  if (!device.lost.load()) [[likely]]
    return HAL_SUCCESS;
  return failf(HAL_ERROR_DEVICE_LOST,
               "device {} was lost earlier ({}); nothing more can run on it. Restart the process "
               "to use it again",
               device.label, device.lost_cause());
}

}  // namespace hal
