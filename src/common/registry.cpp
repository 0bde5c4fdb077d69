#include "common/registry.h"

#include "common/accounting.h"
#include "common/error.h"
#include "common/log.h"
#include "common/selector.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <sstream>

#ifdef HAL_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif
#ifdef HAL_HAVE_VULKAN
#include "vulkan/vulkan_backend.h"
#endif

namespace hal {
namespace {

// The built-in backends, in default order. The one table to extend for a new backend.
std::vector<BackendFactory> builtin_factories() {
  return {
#ifdef HAL_HAVE_CUDA
      {"cuda", HAL_BACKEND_CUDA, &create_cuda_backend},
#endif
#ifdef HAL_HAVE_VULKAN
      {"vulkan", HAL_BACKEND_VULKAN, &create_vulkan_backend},
#endif
  };
}

std::once_flag g_once;
std::vector<BackendFactory>* g_factories_override = nullptr;
bool g_started = false;
Registry* g_registry = nullptr;

std::vector<std::string> split_names(const char* text) {
  std::vector<std::string> names;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    for (char& c : item) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!item.empty() && std::find(names.begin(), names.end(), item) == names.end()) {
      names.push_back(item);
    }
  }
  return names;
}

void init_backend(const BackendFactory& factory, BackendEntry& entry) {
  clear_pending_error();
  hal_status status = HAL_ERROR_INTERNAL;
  std::vector<std::unique_ptr<Device>> devices;
  try {
    entry.impl = factory.create();
    status = entry.impl ? entry.impl->init(&devices) : fail(HAL_ERROR_INTERNAL, "no backend");
  } catch (const std::exception& e) {
    status = failf(HAL_ERROR_INTERNAL, "initialisation threw: {}", e.what());
  }
  if (status != HAL_SUCCESS) {
    entry.available = false;
    entry.reason = pending_error().empty() ? status_name(status) : pending_error();
    entry.devices.clear();
    clear_pending_error();
    log()->info("backend {} unavailable: {}", entry.name, entry.reason);
    return;
  }
  entry.available = true;
  for (auto& device : devices) {
    auto object = std::make_shared<DeviceObject>();
    object->impl = std::move(device);
    object->backend = &entry;
    object->impl->info.struct_size = sizeof(hal_device_info);
    object->impl->info.backend = entry.kind;
    object->impl->info.backend_index = static_cast<uint32_t>(entry.devices.size());
    object->label =
        fmt::format("{}:{} ({})", entry.name, entry.devices.size(), object->impl->info.name);
    entry.devices.push_back(std::move(object));
  }
  log()->info("backend {}: {} device(s)", entry.name, entry.devices.size());
}

void build(Registry& reg) {
  const std::vector<BackendFactory> factories =
      g_factories_override ? *g_factories_override : builtin_factories();
  for (const BackendFactory& f : factories) reg.known_names.push_back(f.name);

  std::vector<std::string> wanted = reg.known_names;
  if (const char* env = std::getenv("HAL_BACKENDS"); env != nullptr && *env != '\0') {
    wanted = split_names(env);
    if (wanted.empty()) {
      reg.init_status = HAL_ERROR_INVALID_ARGUMENT;
      reg.init_message = fmt::format(
          "HAL_BACKENDS='{}' names no backend; unset it for all, or list names such as 'vulkan'",
          env);
      log()->warn("{}", reg.init_message);
    }
  }
  for (const std::string& name : wanted) {
    auto entry = std::make_unique<BackendEntry>();
    entry->name = name;
    auto it = std::find_if(factories.begin(), factories.end(),
                           [&](const BackendFactory& f) { return name == f.name; });
    if (it == factories.end()) {
      std::string known;
      for (const std::string& k : reg.known_names) known += (known.empty() ? "" : ", ") + k;
      entry->reason = fmt::format(
          "HAL_BACKENDS names '{}', which this build does not have. Backends built in: {}", name,
          known.empty() ? "none" : known);
      reg.init_status = HAL_ERROR_INVALID_ARGUMENT;
      reg.init_message += (reg.init_message.empty() ? "" : "; ") + entry->reason;
      log()->warn("{}", entry->reason);
    } else {
      entry->kind = it->kind;
      init_backend(*it, *entry);
    }
    reg.backends.push_back(std::move(entry));
  }

  // Global order: GPUs first, then CPU devices; stable, so backend order holds within each.
  for (const auto& entry : reg.backends) {
    for (const auto& device : entry->devices) reg.devices.push_back(device);
  }
  std::stable_sort(reg.devices.begin(), reg.devices.end(), [](const auto& a, const auto& b) {
    return !a->impl->info.is_cpu && b->impl->info.is_cpu;
  });
  for (size_t i = 0; i < reg.devices.size(); ++i) {
    reg.devices[i]->impl->info.global_index = static_cast<uint32_t>(i);
    register_handle(reg.devices[i]);
  }
}

std::string device_list(const Registry& reg) {
  if (reg.devices.empty()) return "there are no devices (run hal-info to see why)";
  std::string out = "devices:";
  for (const auto& d : reg.devices) {
    out += fmt::format(" [{}] {};", d->impl->info.global_index, d->label);
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
      for (const auto& entry : reg.backends) {
        if (entry->name != sel.backend) continue;
        if (!entry->available) {
          return failf(HAL_ERROR_NOT_FOUND, "selector '{}': the {} backend is unavailable: {}",
                       text, entry->name, entry->reason);
        }
        if (sel.index >= entry->devices.size()) {
          return failf(HAL_ERROR_NOT_FOUND, "selector '{}': the {} backend has {} device(s); {}",
                       text, entry->name, entry->devices.size(), device_list(reg));
        }
        *out = entry->devices[sel.index];
        return HAL_SUCCESS;
      }
      return failf(HAL_ERROR_NOT_FOUND,
                   "selector '{}': the {} backend is not enabled (HAL_BACKENDS leaves it out)",
                   text, sel.backend);
    }
    case Selector::Kind::kName:
      for (const auto& d : reg.devices) {
        if (contains_ignore_case(d->impl->info.name, sel.name)) {
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

bool set_backend_factories_for_testing(std::vector<BackendFactory> factories) {
  if (g_started) return false;
  g_factories_override = new std::vector<BackendFactory>(std::move(factories));
  return true;
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

hal_status check_not_lost(const DeviceObject& device) {
  if (!device.lost.load()) return HAL_SUCCESS;
  return failf(HAL_ERROR_DEVICE_LOST,
               "device {} was lost earlier; nothing more can run on it. Restart the process "
               "(and check the driver's logs for the cause)",
               device.label);
}

}  // namespace hal
