#include "common/driver_export.h"

#include "common/error.h"
#include "common/log.h"
#include "common/trace.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <new>

namespace hal {
namespace {

std::atomic<const hal_driver_host*> g_host{nullptr};
std::mutex g_devices_mutex;
std::vector<Device*>* g_devices = nullptr;  // every device handed to the core; leaked

// Runs |body| as one entry of the table: no exception leaves, and error_message tells this
// call's failure only.
template <typename Body>
hal_status entry(Body&& body) noexcept {
  try {
    clear_pending_error();
    return body();
  } catch (const std::bad_alloc&) {
    return fail(HAL_ERROR_OUT_OF_MEMORY, "host memory ran out inside the driver");
  } catch (const std::exception& e) {
    return failf(HAL_ERROR_INTERNAL, "unexpected failure inside the driver: {}", e.what());
  } catch (...) {
    return fail(HAL_ERROR_INTERNAL, "unexpected failure inside the driver");
  }
}

// For the entries that return nothing (destroy, unload), which the core may call while it holds
// a failure of its own to report: the calling thread's pending error is left as it was (for a
// driver linked into the program it is the core's own), whatever the body does.
template <typename Body>
void quiet_entry(Body&& body) noexcept {
  try {
    std::string saved = pending_error();
    entry(std::forward<Body>(body));
    clear_pending_error();
    if (!saved.empty()) fail(HAL_ERROR_INTERNAL, std::move(saved));
  } catch (...) {  // copying the text ran out of memory: nothing more can be done
  }
}

// A loaded module and the C view of its functions, which the core reads.
struct ExportedModule {
  std::unique_ptr<Module> module;
  std::vector<std::vector<hal_driver_param>> params;
  std::vector<std::vector<uint64_t>> min_bytes;  // per function: param_min_bytes
  std::vector<hal_driver_function_info> infos;
};

Allocation to_cxx(const hal_driver_allocation& a) {
  return Allocation{a.base, a.size, a.driver_data};
}

DeviceRange to_cxx(const hal_driver_range& r) {
  return DeviceRange{to_cxx(r.allocation), r.offset};
}

Event* event_of(hal_driver_event e) {
  return reinterpret_cast<Event*>(e);
}

const char* error_message() {
  return pending_error().c_str();
}

hal_status device_synchronize(hal_driver_device d) {
  return entry([&] { return device_of(d)->synchronize(); });
}

hal_status mem_alloc(hal_driver_device d, size_t size, hal_driver_allocation* out) {
  return entry([&] {
    Allocation a;
    const hal_status s = device_of(d)->mem_alloc(size, &a);
    if (s == HAL_SUCCESS) *out = hal_driver_allocation{a.base, a.size, a.backend_data};
    return s;
  });
}

hal_status mem_free(hal_driver_device d, const hal_driver_allocation* a) {
  return entry([&] { return device_of(d)->mem_free(to_cxx(*a)); });
}

hal_status host_alloc(hal_driver_device d, size_t size, hal_driver_host_allocation* out) {
  return entry([&] { return device_of(d)->host_alloc(size, out); });
}

hal_status host_free(hal_driver_device d, const hal_driver_host_allocation* allocation) {
  return entry([&] { return device_of(d)->host_free(*allocation); });
}

hal_status host_pointer(hal_driver_device d, const hal_driver_allocation* a, uint64_t offset,
                        void** out) {
  return entry([&] { return device_of(d)->host_pointer(to_cxx(*a), offset, out); });
}

hal_status stream_create(hal_driver_device d, hal_driver_stream* out) {
  return entry([&] {
    std::unique_ptr<Stream> stream;
    const hal_status s = device_of(d)->create_stream(&stream);
    if (s == HAL_SUCCESS) *out = reinterpret_cast<hal_driver_stream>(stream.release());
    return s;
  });
}

void stream_destroy(hal_driver_stream s) {
  quiet_entry([&] {
    delete stream_of(s);
    return HAL_SUCCESS;
  });
}

hal_status stream_synchronize(hal_driver_stream s) {
  return entry([&] { return stream_of(s)->synchronize(); });
}

hal_status stream_query(hal_driver_stream s) {
  return entry([&] { return stream_of(s)->query(); });
}

hal_status copy_htod(hal_driver_stream s, const hal_driver_range* dst, const void* src, size_t size,
                     const hal_driver_host_allocation* host) {
  return entry([&] { return stream_of(s)->copy_htod(to_cxx(*dst), src, size, host); });
}

hal_status copy_dtoh(hal_driver_stream s, void* dst, const hal_driver_range* src, size_t size,
                     const hal_driver_host_allocation* host) {
  return entry([&] { return stream_of(s)->copy_dtoh(dst, to_cxx(*src), size, host); });
}

hal_status copy_dtod(hal_driver_stream s, const hal_driver_range* dst, const hal_driver_range* src,
                     size_t size) {
  return entry([&] { return stream_of(s)->copy_dtod(to_cxx(*dst), to_cxx(*src), size); });
}

hal_status fill(hal_driver_stream s, const hal_driver_range* dst, uint32_t pattern,
                uint32_t pattern_size, size_t bytes) {
  return entry([&] { return stream_of(s)->fill(to_cxx(*dst), pattern, pattern_size, bytes); });
}

hal_status launch(hal_driver_stream s, hal_driver_function f, const hal_driver_launch* params) {
  return entry([&] { return stream_of(s)->launch(*reinterpret_cast<Function*>(f), *params); });
}

hal_status event_create(hal_driver_device d, hal_driver_event* out) {
  return entry([&] {
    std::unique_ptr<Event> event;
    const hal_status s = device_of(d)->create_event(&event);
    if (s == HAL_SUCCESS) *out = reinterpret_cast<hal_driver_event>(event.release());
    return s;
  });
}

void event_destroy(hal_driver_event e) {
  quiet_entry([&] {
    delete event_of(e);
    return HAL_SUCCESS;
  });
}

hal_status event_record(hal_driver_stream s, hal_driver_event e) {
  return entry([&] { return stream_of(s)->record(*event_of(e)); });
}

hal_status stream_wait(hal_driver_stream s, hal_driver_event e) {
  return entry([&] { return stream_of(s)->wait(*event_of(e)); });
}

hal_status event_synchronize(hal_driver_event e) {
  return entry([&] { return event_of(e)->synchronize(); });
}

hal_status event_query(hal_driver_event e) {
  return entry([&] { return event_of(e)->query(); });
}

hal_status event_elapsed_ms(hal_driver_event start, hal_driver_event end, float* ms) {
  return entry([&] { return event_of(start)->elapsed_ms(*event_of(end), ms); });
}

hal_status module_load(hal_driver_device d, hal_ir ir, const void* blob, size_t size,
                       const hal_driver_module_options* options, hal_driver_module* out,
                       uint32_t* function_count) {
  return entry([&] {
    ModuleOptions parsed;
    for (uint32_t i = 0; i < options->specialization_count; ++i) {
      const hal_driver_specialization& s = options->specializations[i];
      parsed.specializations.push_back(Specialization{s.id, s.size, s.value});
    }
    parsed.shared_bytes_constant = options->shared_bytes_constant != 0;
    parsed.shared_bytes_constant_id = options->shared_bytes_constant_id;
    auto exported = std::make_unique<ExportedModule>();
    const hal_status loaded = device_of(d)->load_module(ir, static_cast<const uint8_t*>(blob), size,
                                                        parsed, &exported->module);
    if (loaded != HAL_SUCCESS) return loaded;
    const auto& functions = exported->module->functions;
    exported->params.resize(functions.size());
    exported->min_bytes.resize(functions.size());
    exported->infos.resize(functions.size());
    for (size_t i = 0; i < functions.size(); ++i) {
      const FunctionDesc& desc = functions[i]->desc;
      bool reach_known = false;
      for (const ParamInfo& p : desc.params) {
        exported->params[i].push_back(
            hal_driver_param{p.kind, p.size, p.alignment, p.nullable ? 1u : 0u, p.type});
        exported->min_bytes[i].push_back(p.min_bytes);
        reach_known = reach_known || p.min_bytes != 0;
      }
      hal_driver_function_info& info = exported->infos[i];
      info.name = desc.name.c_str();
      info.params_known = desc.params_known ? 1 : 0;
      info.param_count = static_cast<uint32_t>(desc.params.size());
      info.params = exported->params[i].data();
      for (int axis = 0; axis < 3; ++axis) info.block[axis] = desc.block[axis];
      info.static_shared_bytes = desc.static_shared_bytes;
      info.max_threads_per_block = desc.max_threads_per_block;
      info.dynamic_shared = desc.dynamic_shared ? 1 : 0;
      info.shared_bytes_required = desc.shared_bytes_required ? 1 : 0;
      info.unavailable = desc.unavailable.empty() ? nullptr : desc.unavailable.c_str();
      info.param_min_bytes = reach_known ? exported->min_bytes[i].data() : nullptr;
    }
    *function_count = static_cast<uint32_t>(functions.size());
    *out = reinterpret_cast<hal_driver_module>(exported.release());
    return HAL_SUCCESS;
  });
}

hal_status module_function(hal_driver_module m, uint32_t index, hal_driver_function* function,
                           const hal_driver_function_info** info) {
  return entry([&] {
    auto* exported = reinterpret_cast<ExportedModule*>(m);
    if (index >= exported->infos.size()) {
      return failf(HAL_ERROR_NOT_FOUND, "the module has {} functions; {} is beyond them",
                   exported->infos.size(), index);
    }
    *function = reinterpret_cast<hal_driver_function>(exported->module->functions[index].get());
    *info = &exported->infos[index];
    return HAL_SUCCESS;
  });
}

void module_unload(hal_driver_module m) {
  quiet_entry([&] {
    delete reinterpret_cast<ExportedModule*>(m);
    return HAL_SUCCESS;
  });
}

}  // namespace

hal_status cxx_driver_init(CxxDriver& driver, const hal_driver_host* host, uint32_t* count) {
  return entry([&] {
    g_host.store(host);
    // In a module this is the module's own switch (driver_client.cpp); in a program that links
    // a driver in, the core's, which already holds the same value.
    trace::detail::g_on.store(host->trace_enabled() != 0, std::memory_order_relaxed);
    driver.backend = driver.create();
    if (!driver.backend) return fail(HAL_ERROR_INTERNAL, "the backend could not be created");
    const hal_status status = driver.backend->init(&driver.devices);
    if (status != HAL_SUCCESS) return status;
    *count = static_cast<uint32_t>(driver.devices.size());
    std::lock_guard lock(g_devices_mutex);
    if (g_devices == nullptr) g_devices = new std::vector<Device*>();
    for (const auto& device : driver.devices) g_devices->push_back(device.get());
    return HAL_SUCCESS;
  });
}

hal_status cxx_driver_device_get(CxxDriver& driver, uint32_t index, hal_driver_device* device,
                                 hal_device_info* info) {
  return entry([&] {
    if (index >= driver.devices.size()) {
      return failf(HAL_ERROR_NOT_FOUND, "device {} of {}", index, driver.devices.size());
    }
    *device = handle_of(driver.devices[index].get());
    // The core's hal_device_info may be older (smaller) than the one this driver was built with.
    const size_t size = std::min<size_t>(info->struct_size, sizeof(hal_device_info));
    std::memcpy(info, &driver.devices[index]->info, size);
    return HAL_SUCCESS;
  });
}

hal_driver cxx_driver_table(const char* name, hal_backend kind) {
  hal_driver t{};
  t.struct_size = sizeof(hal_driver);
  t.interface_version = HAL_DRIVER_INTERFACE_VERSION;
  t.name = name;
  t.backend = kind;
  t.error_message = &error_message;
  t.device_synchronize = &device_synchronize;
  t.mem_alloc = &mem_alloc;
  t.mem_free = &mem_free;
  t.host_alloc = &host_alloc;
  t.host_free = &host_free;
  t.host_pointer = &host_pointer;
  t.stream_create = &stream_create;
  t.stream_destroy = &stream_destroy;
  t.stream_synchronize = &stream_synchronize;
  t.stream_query = &stream_query;
  t.copy_htod = &copy_htod;
  t.copy_dtoh = &copy_dtoh;
  t.copy_dtod = &copy_dtod;
  t.fill = &fill;
  t.launch = &launch;
  t.event_create = &event_create;
  t.event_destroy = &event_destroy;
  t.event_record = &event_record;
  t.stream_wait = &stream_wait;
  t.event_synchronize = &event_synchronize;
  t.event_query = &event_query;
  t.event_elapsed_ms = &event_elapsed_ms;
  t.module_load = &module_load;
  t.module_function = &module_function;
  t.module_unload = &module_unload;
  return t;
}

const hal_driver_host* attached_host() {
  return g_host.load();
}

void attach_host_for_testing(const hal_driver_host* host) {
  g_host.store(host);
}

namespace {
// The host's device-loss entries, or nullptr when there is no host or it predates them.
const hal_driver_host* host_with_loss_entries() {
  const hal_driver_host* host = attached_host();
  if (host == nullptr || host->struct_size < offsetof(hal_driver_host, device_is_lost) +
                                                 sizeof(host->device_is_lost)) {
    return nullptr;
  }
  return host;
}
}  // namespace

void Device::report_lost(const std::string& cause) {
  if (const hal_driver_host* host = host_with_loss_entries()) {
    host->device_lost(handle_of(this), cause.c_str());
  } else {
    log()->error("device '{}' lost: {}", info.name, cause);
  }
}

bool Device::lost() const {
  const hal_driver_host* host = host_with_loss_entries();
  return host != nullptr && host->device_is_lost(handle_of(const_cast<Device*>(this))) != 0;
}

hal_driver_device handle_of(Device* device) {
  return reinterpret_cast<hal_driver_device>(device);
}

Device* device_with_info(const hal_device_info& info) {
  std::lock_guard lock(g_devices_mutex);
  if (g_devices == nullptr) return nullptr;
  for (Device* d : *g_devices) {
    if (&d->info == &info) return d;
  }
  return nullptr;
}

}  // namespace hal
