// Streams and events.
#include "common/api_guard.h"
#include "common/registry.h"

using namespace hal;

namespace {

std::shared_ptr<StreamObject> lookup_stream(hal_stream stream) {
  return find_as<StreamObject>(stream, HandleKind::kStream, "stream");
}

std::shared_ptr<EventObject> lookup_event(hal_event event, const char* what = "event") {
  return find_as<EventObject>(event, HandleKind::kEvent, what);
}

hal_status same_device(const DeviceObject* a, const DeviceObject* b, const char* what_a,
                       const char* what_b) {
  if (a == b) return HAL_SUCCESS;
  return failf(HAL_ERROR_INVALID_HANDLE,
               "the {} belongs to device {} but the {} to device {}; both must be on one device",
               what_a, a->label, what_b, b->label);
}

}  // namespace

extern "C" {

HAL_API hal_status hal_stream_create(hal_device device, hal_stream* stream) {
  return guarded("hal_stream_create", [&]() -> hal_status {
    auto dev = lookup_device(device);
    if (!dev) return HAL_ERROR_INVALID_HANDLE;
    HAL_REQUIRE_ARG(stream != nullptr, "stream is NULL");
    HAL_RETURN_IF_ERROR(check_not_lost(*dev));
    auto object = std::make_shared<StreamObject>();
    object->device = dev.get();
    HAL_RETURN_IF_ERROR(
        driver_status(*dev, dev->driver->table.stream_create(dev->impl, &object->impl)));
    *stream = to_handle<hal_stream>(register_handle(object));
    return HAL_SUCCESS;
  });
}

HAL_API hal_status hal_stream_destroy(hal_stream stream) {
  return guarded("hal_stream_destroy", [&]() -> hal_status {
    auto object = std::static_pointer_cast<StreamObject>(
        unregister_handle(reinterpret_cast<uintptr_t>(stream), HandleKind::kStream, "stream"));
    if (!object) return HAL_ERROR_INVALID_HANDLE;
    std::lock_guard lock(object->mutex);
    // Documented: destroy waits for the stream's work; a failure there does not keep it alive.
    if (!object->device->lost.load()) {
      driver_status(*object->device,
                    object->device->driver->table.stream_synchronize(object->impl));
      clear_pending_error();
    }
    object->device->driver->table.stream_destroy(object->impl);
    object->impl = nullptr;
    return HAL_SUCCESS;
  });
}

HAL_API hal_status hal_stream_synchronize(hal_stream stream) {
  return guarded("hal_stream_synchronize", [&]() -> hal_status {
    auto s = lookup_stream(stream);
    if (!s) return HAL_ERROR_INVALID_HANDLE;
    std::lock_guard lock(s->mutex);
    if (!s->impl) return fail(HAL_ERROR_INVALID_HANDLE, "the stream was destroyed");
    HAL_RETURN_IF_ERROR(check_not_lost(*s->device));
    return driver_status(*s->device, s->device->driver->table.stream_synchronize(s->impl));
  });
}

HAL_API hal_status hal_stream_query(hal_stream stream) {
  return guarded("hal_stream_query", [&]() -> hal_status {
    auto s = lookup_stream(stream);
    if (!s) return HAL_ERROR_INVALID_HANDLE;
    std::lock_guard lock(s->mutex);
    if (!s->impl) return fail(HAL_ERROR_INVALID_HANDLE, "the stream was destroyed");
    HAL_RETURN_IF_ERROR(check_not_lost(*s->device));
    return driver_status(*s->device, s->device->driver->table.stream_query(s->impl));
  });
}

HAL_API hal_status hal_stream_wait_event(hal_stream stream, hal_event event) {
  return guarded("hal_stream_wait_event", [&]() -> hal_status {
    auto s = lookup_stream(stream);
    if (!s) return HAL_ERROR_INVALID_HANDLE;
    auto e = lookup_event(event);
    if (!e) return HAL_ERROR_INVALID_HANDLE;
    HAL_RETURN_IF_ERROR(same_device(s->device, e->device, "stream", "event"));
    if (!e->recorded.load()) return HAL_SUCCESS;  // never recorded: nothing to wait for
    std::lock_guard lock(s->mutex);
    if (!s->impl) return fail(HAL_ERROR_INVALID_HANDLE, "the stream was destroyed");
    HAL_RETURN_IF_ERROR(check_not_lost(*s->device));
    return driver_status(*s->device, s->device->driver->table.stream_wait(s->impl, e->impl));
  });
}

HAL_API hal_status hal_event_create(hal_device device, hal_event* event) {
  return guarded("hal_event_create", [&]() -> hal_status {
    auto dev = lookup_device(device);
    if (!dev) return HAL_ERROR_INVALID_HANDLE;
    HAL_REQUIRE_ARG(event != nullptr, "event is NULL");
    HAL_RETURN_IF_ERROR(check_not_lost(*dev));
    auto object = std::make_shared<EventObject>();
    object->device = dev.get();
    HAL_RETURN_IF_ERROR(
        driver_status(*dev, dev->driver->table.event_create(dev->impl, &object->impl)));
    *event = to_handle<hal_event>(register_handle(object));
    return HAL_SUCCESS;
  });
}

HAL_API hal_status hal_event_destroy(hal_event event) {
  return guarded("hal_event_destroy", [&]() -> hal_status {
    auto object =
        unregister_handle(reinterpret_cast<uintptr_t>(event), HandleKind::kEvent, "event");
    return object ? HAL_SUCCESS : HAL_ERROR_INVALID_HANDLE;
  });
}

HAL_API hal_status hal_event_record(hal_event event, hal_stream stream) {
  return guarded("hal_event_record", [&]() -> hal_status {
    auto e = lookup_event(event);
    if (!e) return HAL_ERROR_INVALID_HANDLE;
    auto s = lookup_stream(stream);
    if (!s) return HAL_ERROR_INVALID_HANDLE;
    HAL_RETURN_IF_ERROR(same_device(e->device, s->device, "event", "stream"));
    std::lock_guard lock(s->mutex);
    if (!s->impl) return fail(HAL_ERROR_INVALID_HANDLE, "the stream was destroyed");
    HAL_RETURN_IF_ERROR(check_not_lost(*s->device));
    HAL_RETURN_IF_ERROR(
        driver_status(*s->device, s->device->driver->table.event_record(s->impl, e->impl)));
    e->recorded.store(true);
    return HAL_SUCCESS;
  });
}

HAL_API hal_status hal_event_synchronize(hal_event event) {
  return guarded("hal_event_synchronize", [&]() -> hal_status {
    auto e = lookup_event(event);
    if (!e) return HAL_ERROR_INVALID_HANDLE;
    if (!e->recorded.load()) return HAL_SUCCESS;
    HAL_RETURN_IF_ERROR(check_not_lost(*e->device));
    return driver_status(*e->device, e->device->driver->table.event_synchronize(e->impl));
  });
}

HAL_API hal_status hal_event_query(hal_event event) {
  return guarded("hal_event_query", [&]() -> hal_status {
    auto e = lookup_event(event);
    if (!e) return HAL_ERROR_INVALID_HANDLE;
    if (!e->recorded.load()) return HAL_SUCCESS;
    HAL_RETURN_IF_ERROR(check_not_lost(*e->device));
    return driver_status(*e->device, e->device->driver->table.event_query(e->impl));
  });
}

HAL_API hal_status hal_event_elapsed_ms(hal_event start, hal_event end, float* ms) {
  return guarded("hal_event_elapsed_ms", [&]() -> hal_status {
    auto a = lookup_event(start, "start event");
    if (!a) return HAL_ERROR_INVALID_HANDLE;
    auto b = lookup_event(end, "end event");
    if (!b) return HAL_ERROR_INVALID_HANDLE;
    HAL_REQUIRE_ARG(ms != nullptr, "ms is NULL");
    HAL_RETURN_IF_ERROR(same_device(a->device, b->device, "start event", "end event"));
    HAL_REQUIRE_ARG(a->recorded.load(),
                    "the start event was never recorded; call "
                    "hal_event_record first");
    HAL_REQUIRE_ARG(b->recorded.load(),
                    "the end event was never recorded; call "
                    "hal_event_record first");
    const hal_driver& driver = a->device->driver->table;
    if ((a->device->info.features & HAL_FEATURE_TIMESTAMPS) == 0 ||
        driver.event_elapsed_ms == nullptr) {
      return failf(HAL_ERROR_NOT_SUPPORTED, "device {} has no device timestamps", a->device->label);
    }
    HAL_RETURN_IF_ERROR(check_not_lost(*a->device));
    return driver_status(*a->device, driver.event_elapsed_ms(a->impl, b->impl, ms));
  });
}

}  // extern "C"

namespace hal {

StreamObject::~StreamObject() {
  if (impl != nullptr) device->driver->table.stream_destroy(impl);
}

EventObject::~EventObject() {
  if (impl != nullptr) device->driver->table.event_destroy(impl);
}

}  // namespace hal
